package storetest

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/posgate/posgate"
)

// slide returns a valid slide of a company, not yet stored.
func slide(posSystemID, companyID, id string, position int) *posgate.Slide {
	return &posgate.Slide{POSSystemID: posSystemID, CompanyID: companyID, ID: id, Position: position,
		ImageURL: "https://cdn.example.com/" + id + ".png", Title: "Title " + id, Text: "Text of " + id, DurationSeconds: 7}
}

func testSlideCreateFindList(t *testing.T, e *env) {
	ctx := t.Context()
	e.posSystem("clover")
	e.company("clover", "acme", posgate.AllFeaturesOn())
	e.company("clover", "other", posgate.AllFeaturesOn())
	check(t, "ListSlides of a company without slides", len(must[[]*posgate.Slide](t, "ListSlides")(e.s.ListSlides(ctx, "clover", "acme"))), 0)

	// Position 0 appends: 1 for the first slide, last+1 afterwards.
	a := slide("clover", "acme", "a", 0)
	if err := e.s.CreateSlide(ctx, a); err != nil {
		t.Fatalf("CreateSlide: %v", err)
	}
	want := *slide("clover", "acme", "a", 1)
	want.CreatedAt, want.UpdatedAt = e.clk.stamp(), e.clk.stamp()
	check(t, "CreateSlide sets position and times", a, &want)
	e.clk.advance()
	b := slide("clover", "acme", "b", 50)
	b.ImageURL, b.Text = "", "" // a title alone is a slide
	if err := e.s.CreateSlide(ctx, b); err != nil {
		t.Fatalf("CreateSlide: %v", err)
	}
	c := slide("clover", "acme", "c", 0)
	if err := e.s.CreateSlide(ctx, c); err != nil {
		t.Fatalf("CreateSlide: %v", err)
	}
	check(t, "appended after position 50", c.Position, 51)
	// Equal positions fall back to the id.
	d := slide("clover", "acme", "0-d", 50)
	if err := e.s.CreateSlide(ctx, d); err != nil {
		t.Fatalf("CreateSlide: %v", err)
	}
	o := slide("clover", "other", "a", 0)
	if err := e.s.CreateSlide(ctx, o); err != nil {
		t.Fatalf("CreateSlide in another company with the same id: %v", err)
	}
	check(t, "other company's first slide", o.Position, 1)

	check(t, "FindSlide(b)", must[*posgate.Slide](t, "FindSlide")(e.s.FindSlide(ctx, "clover", "acme", "b")), b)
	check(t, "ListSlides(acme)", must[[]*posgate.Slide](t, "ListSlides")(e.s.ListSlides(ctx, "clover", "acme")), []*posgate.Slide{a, d, b, c})
	check(t, "ListSlides(other)", must[[]*posgate.Slide](t, "ListSlides")(e.s.ListSlides(ctx, "clover", "other")), []*posgate.Slide{o})
}

func testSlideUpdateDelete(t *testing.T, e *env) {
	ctx := t.Context()
	e.posSystem("clover")
	e.company("clover", "acme", posgate.AllFeaturesOn())
	a := slide("clover", "acme", "a", 3)
	if err := e.s.CreateSlide(ctx, a); err != nil {
		t.Fatalf("CreateSlide: %v", err)
	}
	later := e.clk.advance()
	got := must[*posgate.Slide](t, "UpdateSlide")(e.s.UpdateSlide(ctx, "clover", "acme", "a", posgate.SlideUpdate{Title: ptr("New"), DurationSeconds: ptr(15)}))
	want := *a
	want.Title, want.DurationSeconds, want.UpdatedAt = "New", 15, later
	check(t, "UpdateSlide of two fields", got, &want)
	got = must[*posgate.Slide](t, "UpdateSlide")(e.s.UpdateSlide(ctx, "clover", "acme", "a", posgate.SlideUpdate{
		Position: ptr(9), ImageURL: ptr(""), Text: ptr("")}))
	want.Position, want.ImageURL, want.Text = 9, "", ""
	check(t, "UpdateSlide to empty strings", got, &want)
	check(t, "FindSlide after the updates", must[*posgate.Slide](t, "FindSlide")(e.s.FindSlide(ctx, "clover", "acme", "a")), &want)

	_, err := e.s.UpdateSlide(ctx, "clover", "acme", "nope", posgate.SlideUpdate{Title: ptr("x")})
	checkErr(t, "UpdateSlide of an absent slide", err, posgate.ErrNotFound, `slide "nope" not found`)
	check(t, "DeleteSlide returns the slide", must[*posgate.Slide](t, "DeleteSlide")(e.s.DeleteSlide(ctx, "clover", "acme", "a")), &want)
	_, err = e.s.FindSlide(ctx, "clover", "acme", "a")
	checkErr(t, "FindSlide after DeleteSlide", err, posgate.ErrNotFound, `slide "a" not found`)
	_, err = e.s.DeleteSlide(ctx, "clover", "acme", "a")
	checkErr(t, "DeleteSlide again", err, posgate.ErrNotFound, `slide "a" not found`)
}

func testSlideErrors(t *testing.T, e *env) {
	ctx := t.Context()
	e.posSystem("clover")
	e.company("clover", "acme", posgate.AllFeaturesOn())
	a := slide("clover", "acme", "a", 0)
	if err := e.s.CreateSlide(ctx, a); err != nil {
		t.Fatalf("CreateSlide: %v", err)
	}
	checkErr(t, "CreateSlide of an existing id", e.s.CreateSlide(ctx, slide("clover", "acme", "a", 4)), posgate.ErrConflict, `slide "a" already exists`)
	check(t, "FindSlide after the conflict", must[*posgate.Slide](t, "FindSlide")(e.s.FindSlide(ctx, "clover", "acme", "a")), a)
	checkErr(t, "CreateSlide of an unknown company", e.s.CreateSlide(ctx, slide("clover", "nope", "a", 0)), posgate.ErrNotFound, `company "nope" not found`)
	checkErr(t, "CreateSlide of an unknown POS system", e.s.CreateSlide(ctx, slide("pax", "acme", "a", 0)), posgate.ErrNotFound, `company "acme" not found`)
	_, err := e.s.FindSlide(ctx, "clover", "acme", "A")
	checkErr(t, "FindSlide is case-sensitive", err, posgate.ErrNotFound, `slide "A" not found`)
	_, err = e.s.FindSlide(ctx, "pax", "acme", "a")
	checkErr(t, "FindSlide under another POS system", err, posgate.ErrNotFound, `slide "a" not found`)
}

func testCarouselSettings(t *testing.T, e *env) {
	ctx := t.Context()
	e.posSystem("clover")
	e.company("clover", "acme", posgate.AllFeaturesOn())
	_, err := e.s.FindCarouselSettings(ctx, "clover", "acme")
	checkErr(t, "FindCarouselSettings never set", err, posgate.ErrNotFound, `carousel settings of company "acme" not found`)
	c := &posgate.CarouselSettings{POSSystemID: "clover", CompanyID: "acme", URLTemplate: "https://ads.example.com/{posLocationId}"}
	if err := e.s.PutCarouselSettings(ctx, c); err != nil {
		t.Fatalf("PutCarouselSettings: %v", err)
	}
	check(t, "PutCarouselSettings sets UpdatedAt", c.UpdatedAt, e.clk.stamp())
	check(t, "FindCarouselSettings", must[*posgate.CarouselSettings](t, "FindCarouselSettings")(e.s.FindCarouselSettings(ctx, "clover", "acme")), c)
	later := e.clk.advance()
	cleared := &posgate.CarouselSettings{POSSystemID: "clover", CompanyID: "acme"}
	if err := e.s.PutCarouselSettings(ctx, cleared); err != nil {
		t.Fatalf("PutCarouselSettings: %v", err)
	}
	check(t, "FindCarouselSettings after clearing", must[*posgate.CarouselSettings](t, "FindCarouselSettings")(e.s.FindCarouselSettings(ctx, "clover", "acme")),
		&posgate.CarouselSettings{POSSystemID: "clover", CompanyID: "acme", UpdatedAt: later})
	checkErr(t, "PutCarouselSettings of an unknown company", e.s.PutCarouselSettings(ctx, &posgate.CarouselSettings{POSSystemID: "clover", CompanyID: "nope"}),
		posgate.ErrNotFound, `company "nope" not found`)
}

func receipt(posSystemID, companyID, locationID, text string) *posgate.ReceiptPromotion {
	return &posgate.ReceiptPromotion{POSSystemID: posSystemID, CompanyID: companyID, LocationID: locationID,
		PrimaryText: text, SecondaryText: "second " + text, TargetURL: "https://example.com/" + text}
}

func testReceiptPromotions(t *testing.T, e *env) {
	ctx := t.Context()
	e.till("clover", "acme", "L1", "T1")
	e.location("clover", "L2", "acme")
	e.company("clover", "other", posgate.AllFeaturesOn())
	e.location("clover", "O1", "other")

	_, err := e.s.EffectiveReceiptPromotion(ctx, "clover", "acme", "L1")
	checkErr(t, "EffectiveReceiptPromotion of nothing", err, posgate.ErrNotFound, `receipt promotion of location "L1" not found`)

	def := receipt("clover", "acme", "", "default")
	if err := e.s.PutReceiptPromotion(ctx, def); err != nil {
		t.Fatalf("PutReceiptPromotion(default): %v", err)
	}
	want := *receipt("clover", "acme", "", "default")
	want.CreatedAt, want.UpdatedAt = e.clk.stamp(), e.clk.stamp()
	check(t, "PutReceiptPromotion sets the times", def, &want)
	check(t, "default applies to L1", must[*posgate.ReceiptPromotion](t, "Effective")(e.s.EffectiveReceiptPromotion(ctx, "clover", "acme", "L1")), def)

	created := e.clk.stamp()
	e.clk.advance()
	l1 := receipt("clover", "acme", "L1", "one")
	if err := e.s.PutReceiptPromotion(ctx, l1); err != nil {
		t.Fatalf("PutReceiptPromotion(L1): %v", err)
	}
	check(t, "L1's own wins", must[*posgate.ReceiptPromotion](t, "Effective")(e.s.EffectiveReceiptPromotion(ctx, "clover", "acme", "L1")), l1)
	check(t, "L2 gets the default", must[*posgate.ReceiptPromotion](t, "Effective")(e.s.EffectiveReceiptPromotion(ctx, "clover", "acme", "L2")), def)
	check(t, "FindReceiptPromotion(L1)", must[*posgate.ReceiptPromotion](t, "Find")(e.s.FindReceiptPromotion(ctx, "clover", "acme", "L1")), l1)
	_, err = e.s.FindReceiptPromotion(ctx, "clover", "acme", "L2")
	checkErr(t, "FindReceiptPromotion(L2) is exact", err, posgate.ErrNotFound, `receipt promotion of location "L2" not found`)

	// Replacing keeps CreatedAt.
	later := e.clk.advance()
	repl := receipt("clover", "acme", "", "replaced")
	if err := e.s.PutReceiptPromotion(ctx, repl); err != nil {
		t.Fatalf("PutReceiptPromotion(replace default): %v", err)
	}
	want = *receipt("clover", "acme", "", "replaced")
	want.CreatedAt, want.UpdatedAt = created, later
	check(t, "replaced default", repl, &want)
	check(t, "ListReceiptPromotions(acme)", must[[]*posgate.ReceiptPromotion](t, "List")(e.s.ListReceiptPromotions(ctx, "clover", "acme")),
		[]*posgate.ReceiptPromotion{repl, l1})
	check(t, "ListReceiptPromotions(other)", len(must[[]*posgate.ReceiptPromotion](t, "List")(e.s.ListReceiptPromotions(ctx, "clover", "other"))), 0)

	checkErr(t, "location of another company", e.s.PutReceiptPromotion(ctx, receipt("clover", "acme", "O1", "x")), posgate.ErrNotFound, `location "O1" not found`)
	checkErr(t, "unknown location", e.s.PutReceiptPromotion(ctx, receipt("clover", "acme", "L9", "x")), posgate.ErrNotFound, `location "L9" not found`)
	checkErr(t, "unknown company", e.s.PutReceiptPromotion(ctx, receipt("clover", "nope", "", "x")), posgate.ErrNotFound, `company "nope" not found`)
	_, err = e.s.EffectiveReceiptPromotion(ctx, "clover", "other", "O1")
	checkErr(t, "other company sees nothing of acme's", err, posgate.ErrNotFound, `receipt promotion of location "O1" not found`)

	check(t, "DeleteReceiptPromotion(L1)", must[*posgate.ReceiptPromotion](t, "Delete")(e.s.DeleteReceiptPromotion(ctx, "clover", "acme", "L1")), l1)
	check(t, "L1 falls back to the default", must[*posgate.ReceiptPromotion](t, "Effective")(e.s.EffectiveReceiptPromotion(ctx, "clover", "acme", "L1")), repl)
	must[*posgate.ReceiptPromotion](t, "Delete")(e.s.DeleteReceiptPromotion(ctx, "clover", "acme", ""))
	_, err = e.s.DeleteReceiptPromotion(ctx, "clover", "acme", "")
	checkErr(t, "DeleteReceiptPromotion again", err, posgate.ErrNotFound, `receipt promotion of company "acme" not found`)
	_, err = e.s.EffectiveReceiptPromotion(ctx, "clover", "acme", "L1")
	checkErr(t, "nothing left", err, posgate.ErrNotFound, `receipt promotion of location "L1" not found`)
}

func testImpressions(t *testing.T, e *env) {
	ctx := t.Context()
	e.till("clover", "acme", "L1", "T1")
	e.terminal("clover", "L1", "T2")
	e.location("clover", "L2", "acme")
	e.terminal("clover", "L2", "T1")
	e.company("clover", "other", posgate.AllFeaturesOn())
	e.location("clover", "O1", "other")
	e.terminal("clover", "O1", "T1")

	day := time.Date(2031, 3, 10, 0, 0, 0, 0, time.UTC)
	rec := func(loc, term, slideID string, at time.Time, n int) {
		t.Helper()
		company := "acme"
		if loc == "O1" {
			company = "other"
		}
		for range n {
			if err := e.s.RecordImpression(ctx, &posgate.Impression{POSSystemID: "clover", CompanyID: company, LocationID: loc, TerminalID: term, SlideID: slideID, At: at}); err != nil {
				t.Fatalf("RecordImpression: %v", err)
			}
		}
	}
	// 23:30 in UTC-5 on the 9th is the 10th in UTC.
	rec("L1", "T1", "a", time.Date(2031, 3, 9, 23, 30, 0, 0, time.FixedZone("EST", -5*3600)), 3)
	rec("L1", "T1", "b", day.Add(23*time.Hour+59*time.Minute), 1)
	rec("L1", "T2", "a", day.Add(-time.Nanosecond), 2) // the 9th
	rec("L2", "T1", "a", day.AddDate(0, 0, 1), 4)      // the 11th
	rec("O1", "T1", "a", day, 5)

	count := func(q posgate.ImpressionQuery) []posgate.ImpressionCount {
		t.Helper()
		q.POSSystemID = "clover"
		if q.CompanyID == "" {
			q.CompanyID = "acme"
		}
		var out []posgate.ImpressionCount
		for _, c := range must[[]*posgate.ImpressionCount](t, "CountImpressions")(e.s.CountImpressions(ctx, q)) {
			out = append(out, *c)
		}
		return out
	}
	check(t, "the 10th", count(posgate.ImpressionQuery{From: day, To: day}), []posgate.ImpressionCount{
		ic("L1", "T1", "a", 3), ic("L1", "T1", "b", 1)})
	check(t, "the 9th to the 11th", count(posgate.ImpressionQuery{From: day.AddDate(0, 0, -1), To: day.AddDate(0, 0, 1)}), []posgate.ImpressionCount{
		ic("L1", "T1", "a", 3), ic("L1", "T1", "b", 1), ic("L1", "T2", "a", 2), ic("L2", "T1", "a", 4)})
	check(t, "one location", count(posgate.ImpressionQuery{LocationID: "L1", From: day.AddDate(0, 0, -5), To: day.AddDate(0, 0, 5)}), []posgate.ImpressionCount{
		ic("L1", "T1", "a", 3), ic("L1", "T1", "b", 1), ic("L1", "T2", "a", 2)})
	check(t, "one terminal id", count(posgate.ImpressionQuery{TerminalID: "T1", From: day.AddDate(0, 0, -5), To: day.AddDate(0, 0, 5)}), []posgate.ImpressionCount{
		ic("L1", "T1", "a", 3), ic("L1", "T1", "b", 1), ic("L2", "T1", "a", 4)})
	check(t, "another company", count(posgate.ImpressionQuery{CompanyID: "other", From: day, To: day}), []posgate.ImpressionCount{ic("O1", "T1", "a", 5)})
	check(t, "no days with data", len(count(posgate.ImpressionQuery{From: day.AddDate(0, 0, 2), To: day.AddDate(0, 0, 9)})), 0)

	err := e.s.RecordImpression(ctx, &posgate.Impression{POSSystemID: "clover", CompanyID: "acme", LocationID: "L1", TerminalID: "T9", SlideID: "a", At: day})
	checkErr(t, "RecordImpression at an unknown terminal", err, posgate.ErrNotFound, `terminal "T9" not found`)
}

// testConcurrentImpressions checks that simultaneous showings are all
// counted: the counter is incremented in the store, never read and written
// back.
// ic is an ImpressionCount, written short.
func ic(loc, term, slideID string, n int64) posgate.ImpressionCount {
	return posgate.ImpressionCount{LocationID: loc, TerminalID: term, SlideID: slideID, Count: n}
}

func testConcurrentImpressions(t *testing.T, e *env) {
	ctx := t.Context()
	e.till("clover", "acme", "L1", "T1")
	const n = 40
	day := time.Date(2031, 3, 10, 12, 0, 0, 0, time.UTC)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			errs[i] = e.s.RecordImpression(ctx, &posgate.Impression{POSSystemID: "clover", CompanyID: "acme", LocationID: "L1", TerminalID: "T1", SlideID: "s", At: day})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("RecordImpression %d: %v", i, err)
		}
	}
	got := must[[]*posgate.ImpressionCount](t, "CountImpressions")(e.s.CountImpressions(ctx, posgate.ImpressionQuery{
		POSSystemID: "clover", CompanyID: "acme", From: posgate.ImpressionDay(day), To: posgate.ImpressionDay(day)}))
	check(t, "concurrent impressions", got, []*posgate.ImpressionCount{{LocationID: "L1", TerminalID: "T1", SlideID: "s", Count: n}})
}

func testEnsureSecret(t *testing.T, e *env) {
	ctx := t.Context()
	first := must[[]byte](t, "EnsureSecret")(e.s.EnsureSecret(ctx, "carousel", []byte("first candidate")))
	check(t, "EnsureSecret stores the first candidate", string(first), "first candidate")
	again := must[[]byte](t, "EnsureSecret")(e.s.EnsureSecret(ctx, "carousel", []byte("second candidate")))
	check(t, "EnsureSecret keeps the stored secret", string(again), "first candidate")
	other := must[[]byte](t, "EnsureSecret")(e.s.EnsureSecret(ctx, "other", []byte{0, 1, 2, 255}))
	check(t, "secrets are per name, binary-safe", other, []byte{0, 1, 2, 255})

	// Racing instances all end up with one secret.
	const n = 10
	got := make([][]byte, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			got[i], _ = e.s.EnsureSecret(ctx, "race", []byte(fmt.Sprintf("candidate %d", i)))
		})
	}
	wg.Wait()
	for i := range n {
		if len(got[i]) == 0 || !bytes.Equal(got[i], got[0]) {
			t.Fatalf("racing EnsureSecret answered %q and %q", got[0], got[i])
		}
	}
}
