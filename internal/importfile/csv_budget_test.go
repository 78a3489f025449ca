package importfile

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/posgate/posgate"
)

// TestPromotionsCSVBudget: the budget's columns (docs/api.md §9.7) become
// the item's redemption, only when given; a number that is not whole, or a
// continuation line that differs, names its line.
func TestPromotionsCSVBudget(t *testing.T) {
	in := "id,name,promotionType,value,redemptionQuantity,redemptionPerCustomer\n" +
		"A,both,Amount,1,500,2\n" +
		"A,,Percentage,5,500,\n" +
		"B,total only,Amount,1,10,\n" +
		"C,none,Amount,1,,\n" +
		"D,negative,Amount,1,-1,\n"
	var out bytes.Buffer
	if _, err := PromotionsCSV(strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	want := `{"items":[{"id":"A","name":"both","promotionResults":[{"promotionType":"Amount","value":1},{"promotionType":"Percentage","value":5}],` +
		`"redemption":{"quantity":500,"perCustomer":2}},` +
		`{"id":"B","name":"total only","promotionResults":[{"promotionType":"Amount","value":1}],"redemption":{"quantity":10}},` +
		`{"id":"C","name":"none","promotionResults":[{"promotionType":"Amount","value":1}]},` +
		`{"id":"D","name":"negative","promotionResults":[{"promotionType":"Amount","value":1}],"redemption":{"quantity":-1}}]}`
	if out.String() != want {
		t.Fatalf("got  %s\nwant %s", out.String(), want)
	}
	for _, c := range []struct{ in, line, err string }{
		{"id,name,redemptionQuantity\nA,a,1.5\n", "line 2", `redemptionQuantity "1.5" is not a whole number`},
		{"id,name,redemptionPerCustomer\nA,a,two\n", "line 2", `redemptionPerCustomer "two" is not a whole number`},
		{"id,name,redemptionQuantity\nA,a,5\nA,,6\n", "line 3", `redemptionQuantity "6" differs from the first line of promotion "A" ("5"); leave it empty on its further lines`},
	} {
		_, err := PromotionsCSV(strings.NewReader(c.in), &bytes.Buffer{})
		var e *posgate.Error
		if !errors.As(err, &e) || len(e.Fields) != 1 || len(e.Fields[c.line]) != 1 || e.Fields[c.line][0] != c.err {
			t.Fatalf("%q: %+v, want %s: %s", c.in, e, c.line, c.err)
		}
	}
}
