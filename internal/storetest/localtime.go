package storetest

import (
	"testing"
	"time"

	"github.com/posgate/posgate"
)

// testPromotionsLocalTime: a promotion's wall-clock times come back as
// wall-clock times and its instants as instants, and both listings of what
// applies read wall-clock times in the zone of the time they are given
// (the location's), through the validity index.
func testPromotionsLocalTime(t *testing.T, e *env) {
	ctx := t.Context()
	e.place("clover", "acme", "L1")
	ny, err := posgate.LoadZone("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	wall := func(s string) *posgate.PromotionTime {
		p, err := posgate.ParsePromotionTime(s)
		if err != nil || !p.IsWall() {
			t.Fatalf("%s: %v", s, err)
		}
		return &p
	}
	// 09:00 to 17:00 on the clock of wherever it is evaluated, on
	// 2031-06-02; breakfast on the local clock every day, from June.
	day := &posgate.Promotion{ID: "DAY", Name: "day", LocationIDs: []string{"L1"},
		Validities: []posgate.PromotionValidity{{StartDate: wall("2031-06-02T09:00:00"), EndDate: wall("2031-06-02T17:00:00")}}}
	breakfast := &posgate.Promotion{ID: "BREAKFAST", Name: "breakfast",
		Validities: []posgate.PromotionValidity{{StartDate: wall("2031-06-01"), Recurrence: &posgate.PromotionRecurrence{
			StartDate: wall("2031-06-01T07:00:00"), EndDate: wall("2031-06-01T11:00:00")}}}}
	instant := &posgate.Promotion{ID: "INSTANT", Name: "instant",
		Validities: []posgate.PromotionValidity{{StartDate: tp(day2(13, 0)), EndDate: tp(day2(21, 0))}}}
	ps := []*posgate.Promotion{breakfast, day, instant}
	accept(t, "acme", []string{"L1"}, ps...)
	stamp := e.clk.stamp()
	e.importPromotions("clover", "acme", 3, 0, ps...)
	for _, p := range ps {
		check(t, "FindPromotion("+p.ID+") keeps its kinds of time", must[*posgate.Promotion](t, "FindPromotion")(e.s.FindPromotion(ctx, "clover", "acme", p.ID)),
			stored(p, "clover", "acme", stamp, stamp))
	}
	for _, tc := range []struct {
		at   time.Time
		want []string
	}{
		{day2(8, 59), []string{"BREAKFAST"}},                                                  // 08:59 UTC
		{day2(9, 0), []string{"BREAKFAST", "DAY"}},                                            // 09:00 UTC
		{day2(11, 0), []string{"DAY"}},                                                        // 11:00 UTC
		{day2(8, 59).In(ny), []string{}},                                                      // 04:59 EDT
		{day2(11, 0).In(ny), []string{"BREAKFAST"}},                                           // 07:00 EDT
		{day2(13, 0).In(ny), []string{"BREAKFAST", "DAY", "INSTANT"}},                         // 09:00 EDT
		{day2(21, 0).In(ny), []string{"DAY", "INSTANT"}},                                      // 17:00 EDT
		{day2(21, 0).Add(time.Microsecond).In(ny), []string{}},                                // just after
		{day2(21, 0).Add(time.Microsecond), []string{}},                                       // 21:00 UTC
		{day2(20, 0).In(time.FixedZone("UTC+14", 14*3600)), []string{"BREAKFAST", "INSTANT"}}, // 10:00 the next day
	} {
		got := promotionIDs(must[[]*posgate.Promotion](t, "ListPromotionsValidAt")(e.s.ListPromotionsValidAt(ctx, "clover", "acme", "L1", tc.at)))
		check(t, "ListPromotionsValidAt at "+tc.at.Format(time.RFC3339Nano), got, tc.want)
		carousel := promotionIDs(must[[]*posgate.Promotion](t, "ListCarouselPromotions")(e.s.ListCarouselPromotions(ctx, "clover", "acme", "L1", tc.at, 10)))
		check(t, "ListCarouselPromotions at "+tc.at.Format(time.RFC3339Nano), len(carousel), len(tc.want))
	}
}

// day2 is 2031-06-02 at hour:minute UTC.
func day2(hour, minute int) time.Time { return time.Date(2031, 6, 2, hour, minute, 0, 0, time.UTC) }
