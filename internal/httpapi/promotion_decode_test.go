package httpapi

import (
	"bytes"
	"fmt"
	"io"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/codec"
	"github.com/posgate/posgate/internal/importfile"
)

// importBody is an import of n promotions shaped like the benchmark's.
func importBody(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"items":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"PROMO-%06d","name":"Promotion %d: 2 off","useForAllCategories":false,"useForAllProducts":true,`+
			`"locationIds":["S1","S2","S3"],"categoryIds":["CAT-01","CAT-%02d"],"productIds":["SKU-1","SKU-2","SKU-3","SKU-4","SKU-%d"],`+
			`"promotionValidities":[{"startDate":"2030-01-01T00:00:00Z","endDate":"2030-06-30T23:59:59Z"},`+
			`{"startDate":"2030-07-01T00:00:00Z","endDate":null,"recurrence":{"daysOfWeek":["Saturday","Sunday"],"startDate":"2030-07-06T08:00:00Z","endDate":"2030-07-06T20:00:00+02:00"}}],`+
			`"promotionResults":[{"promotionType":"Amount","value":2.5}],"extra":{"ignored":[1,2,{"a":null}]}}`, i, i, i%50, i)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

func streamItems(t testing.TB, body []byte, ct string) []*importfile.PromotionItem {
	r := httptest.NewRequest("POST", "/", io.NopCloser(bytes.NewReader(body)))
	r.Header.Set("Content-Type", ct)
	var out []*importfile.PromotionItem
	if err := codec.StreamArray(r, "items", codec.Options{}, func(i int, it *importfile.PromotionItem) error {
		out = append(out, it)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestImportItemDecoderAgreesWithReflection decodes the same body with the
// hand-written decoder and with the reflective one, which must agree.
func TestImportItemDecoderAgreesWithReflection(t *testing.T) {
	body := importBody(50)
	// And one with every field of the promotion model.
	body = append(body[:len(body)-2:len(body)-2], `,{"id":"MODEL","name":"Every field","productIds":["SANDWICH"],"priority":-2,"stackable":true,`+
		`"minQuantity":1.5,"minBasketAmount":10.25,"requiresCoupon":true,"promotionResults":[{"promotionType":"BuyXGetY","value":100,`+
		`"buyQuantity":1,"getQuantity":2,"getProductIds":["MUFFIN"],"maxApplications":3}]}]}`...)
	fast := streamItems(t, body, "application/json")
	var slow struct {
		Items []importfile.PlainPromotionItem `json:"items"`
	}
	r := httptest.NewRequest("POST", "/", io.NopCloser(bytes.NewReader(body)))
	r.Header.Set("Content-Type", "application/json")
	if err := codec.Decode(r, &slow, codec.Options{}); err != nil {
		t.Fatal(err)
	}
	if len(fast) != len(slow.Items) {
		t.Fatalf("%d and %d items", len(fast), len(slow.Items))
	}
	for i := range fast {
		if !reflect.DeepEqual(*fast[i], importfile.PromotionItem(slow.Items[i])) {
			t.Fatalf("item %d:\n fast %+v\n slow %+v", i, *fast[i], slow.Items[i])
		}
	}
	if m := fast[len(fast)-1]; m.Priority != -2 || !m.Stackable || m.MinQuantity != 1.5 || m.MinBasketAmount != 10.25 || !m.RequiresCoupon ||
		!reflect.DeepEqual(m.PromotionResults, []posgate.PromotionResult{{PromotionType: posgate.PromotionBuyXGetY, Value: 100,
			BuyQuantity: 1, GetQuantity: 2, GetProductIDs: []string{"MUFFIN"}, MaxApplications: 3}}) {
		t.Fatalf("the promotion model's fields: %+v", m)
	}
	want := posgate.PromotionValidity{StartDate: ptrTo(posgate.InstantTime(time.Date(2030, 7, 1, 0, 0, 0, 0, time.UTC))),
		Recurrence: &posgate.PromotionRecurrence{DaysOfWeek: []string{"Saturday", "Sunday"},
			StartDate: ptrTo(posgate.InstantTime(time.Date(2030, 7, 6, 8, 0, 0, 0, time.UTC))), EndDate: ptrTo(posgate.InstantTime(time.Date(2030, 7, 6, 18, 0, 0, 0, time.UTC)))}}
	if got := fast[3].PromotionValidities[1]; !reflect.DeepEqual(got, want) {
		t.Fatalf("validity %+v", got)
	}
	// Escaped names and strings, and nulls.
	items := streamItems(t, []byte(`{"items":[{"\u0069d":"a\"b","name":null,"locationIds":null,"promotionResults":[null,{"value":null}]}]}`), "application/json")
	if it := items[0]; it.ID != `a"b` || it.Name != "" || it.LocationIDs != nil || len(it.PromotionResults) != 2 || !reflect.DeepEqual(it.PromotionResults[1], posgate.PromotionResult{}) {
		t.Fatalf("escapes and nulls: %+v", it)
	}
}

func ptrTo[T any](v T) *T { return &v }

func BenchmarkImportItemDecoder(b *testing.B) {
	body := importBody(10_000)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if n := len(streamItems(b, body, "application/json")); n != 10_000 {
			b.Fatal(n)
		}
	}
}
