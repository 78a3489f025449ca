package codec

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/posgate/posgate"
)

// streamIDs returns a handler that streams "items" and records "index:id"
// for every item fn receives; fn fails with errStop at index stopAt.
func streamIDs(opts Options, stopAt int) func(r *http.Request) outcome {
	return func(r *http.Request) outcome {
		var got []string
		err := StreamArray(r, "items", opts, func(i int, p *promotionDTO) error {
			if i == stopAt {
				return errStop
			}
			got = append(got, fmt.Sprintf("%d:%s", i, p.ID))
			return nil
		})
		return outcome{got, err}
	}
}

var errStop = errors.New("stop")

func TestStreamArray(t *testing.T) {
	const js, xs = "application/json", "application/xml"
	strict := Options{DisallowUnknown: true}
	cases := []struct {
		name   string
		ct     string
		body   string
		opts   Options
		stopAt int
		want   []string // items fn saw, also when an error is expected
		code   string   // expected error code; "stop" for errStop
		fields map[string][]string
	}{
		{name: "json", ct: js, body: `{"meta":{"a":[1,{"b":null}]},"items":[{"id":"P1","name":"a"},{"id":"P2","locationIds":["1"]}],"count":2}`,
			want: []string{"0:P1", "1:P2"}},
		{name: "xml", ct: xs, body: `<?xml version="1.0"?><PromotionImportDto xmlns="urn:x"><meta><a>1</a></meta><items><id>P1</id></items><count>2</count>
<items><id>P2</id><locationIds>1</locationIds></items></PromotionImportDto><!-- end -->`,
			want: []string{"0:P1", "1:P2"}},
		{name: "json no items", ct: js, body: `{"count":0}`},
		{name: "json null items", ct: js, body: `{"items":null}`},
		{name: "json empty items", ct: js, body: `{"items":[]}`},
		{name: "xml no items", ct: xs, body: `<r/>`},
		{name: "json unknown disallowed", ct: js, opts: strict, body: `{"items":[{"id":"P1"}],"meta":1}`,
			want: []string{"0:P1"}, code: posgate.EINVALID, fields: field("meta", "The property 'meta' is not allowed.")},
		{name: "xml unknown disallowed", ct: xs, opts: strict, body: `<r><meta/><items><id>P1</id></items></r>`,
			code: posgate.EINVALID, fields: field("meta", "The property 'meta' is not allowed.")},
		{name: "json unknown in item", ct: js, opts: strict, body: `{"items":[{"id":"P1"},{"id":"P2","zz":1}]}`,
			want: []string{"0:P1"}, code: posgate.EINVALID, fields: field("items[1].zz", "The property 'items[1].zz' is not allowed.")},
		{name: "xml unknown in item", ct: xs, opts: strict, body: `<r><items><id>P1</id></items><items><id>P2</id><zz/></items></r>`,
			want: []string{"0:P1"}, code: posgate.EINVALID, fields: field("items[1].zz", "The property 'items[1].zz' is not allowed.")},
		{name: "json type error in item", ct: js, body: `{"items":[{"id":"P1"},{"id":"P2","promotionResults":[{"value":"x"}]}]}`,
			want: []string{"0:P1"}, code: posgate.EINVALID, fields: field("items[1].promotionResults[0].value", "The items[1].promotionResults[0].value field must be a number.")},
		{name: "xml type error in item", ct: xs, body: `<r><items><id>P1</id></items><items><name><b/></name></items></r>`,
			want: []string{"0:P1"}, code: posgate.EINVALID, fields: field("items[1].name", "The items[1].name field must be a string.")},
		{name: "json duplicate in item", ct: js, body: `{"items":[{"id":"P1","id":"P2"}]}`,
			code: posgate.EINVALID, fields: field("items[0].id", "The property 'items[0].id' is given more than once.")},
		{name: "xml duplicate in item", ct: xs, body: `<r><items><id>P1</id><id>P2</id></items></r>`,
			code: posgate.EINVALID, fields: field("items[0].id", "The property 'items[0].id' is given more than once.")},
		{name: "json duplicate items", ct: js, body: `{"items":[{"id":"P1"}],"items":[]}`,
			want: []string{"0:P1"}, code: posgate.EINVALID, fields: field("items", "The property 'items' is given more than once.")},
		{name: "json items not an array", ct: js, body: `{"items":{"id":"P1"}}`,
			code: posgate.EINVALID, fields: field("items", "The items field must be an array.")},
		{name: "json item not an object", ct: js, body: `{"items":[{"id":"P1"},"P2"]}`,
			want: []string{"0:P1"}, code: posgate.EINVALID, fields: field("items[1]", "The items[1] field must be an object.")},
		{name: "json syntax error at the end", ct: js, body: `{"items":[{"id":"P1"},{"id":"P2"}]`,
			want: []string{"0:P1", "1:P2"}, code: posgate.EINVALID, fields: body("The request body is not valid JSON: unexpected end of input.")},
		{name: "json syntax error in array", ct: js, body: `{"items":[{"id":"P1"} {"id":"P2"}]}`,
			want: []string{"0:P1"}, code: posgate.EINVALID, fields: body("The request body is not valid JSON: invalid character '{' after array element (expecting ',' or ']') at byte offset 22.")},
		{name: "json trailing data", ct: js, body: `{"items":[{"id":"P1"}]} []`,
			want: []string{"0:P1"}, code: posgate.EINVALID, fields: body("The request body is not valid JSON: invalid character '[' after top-level value at byte offset 24.")},
		{name: "json trailing garbage", ct: js, body: "{\"items\":[{\"id\":\"P1\"}]}\n\n x",
			want: []string{"0:P1"}, code: posgate.EINVALID, fields: body("The request body is not valid JSON: invalid character 'x' after top-level value at byte offset 26.")},
		{name: "json trailing whitespace", ct: js, body: "{\"items\":[{\"id\":\"P1\"}]}\n\n ", want: []string{"0:P1"}},
		{name: "xml syntax error at the end", ct: xs, body: "<r>\n<items><id>P1</id></items>\n<items><id>P2</id></items>\n",
			want: []string{"0:P1", "1:P2"}, code: posgate.EINVALID, fields: body("The request body is not valid XML: unexpected EOF (line 4).")},
		{name: "xml second root", ct: xs, body: `<r><items><id>P1</id></items></r><r/>`,
			want: []string{"0:P1"}, code: posgate.EINVALID, fields: body("The request body is not valid XML: there is more than one root element.")},
		{name: "xml root text", ct: xs, body: `<r>P1</r>`, code: posgate.EINVALID, fields: body("The root element must contain one child element per property.")},
		{name: "json fn error", ct: js, stopAt: 1, body: `{"items":[{"id":"P1"},{"id":"P2"},{"id":"P3"}]}`, want: []string{"0:P1"}, code: "stop"},
		{name: "xml fn error", ct: xs, stopAt: 1, body: `<r><items><id>P1</id></items><items><id>P2</id></items><items/></r>`, want: []string{"0:P1"}, code: "stop"},
		{name: "json empty", ct: js, body: ``, code: posgate.EINVALID, fields: body("The request body is empty.")},
		{name: "xml empty", ct: xs, body: ` `, code: posgate.EINVALID, fields: body("The request body is empty.")},
		{name: "json top-level array", ct: js, body: `[{"id":"P1"}]`, code: posgate.EINVALID, fields: body("The request body must be a JSON object.")},
		{name: "unsupported", ct: "text/plain", body: `{"items":[]}`, code: posgate.EUNSUPPORTED},
	}
	type key struct {
		opts   Options
		stopAt int
	}
	posts := map[key]func(string, io.Reader) outcome{}
	for _, tc := range cases {
		k := key{tc.opts, tc.stopAt}
		if posts[k] == nil {
			stopAt := tc.stopAt
			if stopAt == 0 {
				stopAt = -1
			}
			posts[k] = newServer(t, 0, streamIDs(tc.opts, stopAt))
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := posts[key{tc.opts, tc.stopAt}](tc.ct, strings.NewReader(tc.body))
			switch tc.code {
			case "":
				if got.err != nil {
					t.Fatalf("error %v (fields %v), want none", got.err, fieldsOf(got.err))
				}
			case "stop":
				if got.err != errStop {
					t.Fatalf("error %v, want fn's error unchanged", got.err)
				}
			case posgate.EUNSUPPORTED:
				checkError(t, got.err, tc.code, nil)
			default:
				checkError(t, got.err, tc.code, tc.fields)
			}
			if ids := got.value.([]string); !reflect.DeepEqual(ids, tc.want) {
				t.Errorf("fn saw %q, want %q", ids, tc.want)
			}
		})
	}
}

func TestStreamArrayTooLarge(t *testing.T) {
	items := strings.Repeat(`{"id":"P1","name":"`+strings.Repeat("n", 100)+`"},`, 40)
	xmlItems := strings.Repeat(`<items><id>P1</id><name>`+strings.Repeat("n", 100)+`</name></items>`, 40)
	post := newServer(t, 1024, streamIDs(Options{}, -1))
	for ct, b := range map[string]string{
		"application/json": `{"items":[` + items + `{}]}`,
		"application/xml":  `<r>` + xmlItems + `</r>`,
	} {
		got := post(ct, strings.NewReader(b))
		if posgate.ErrorCode(got.err) != posgate.ETOOLARGE {
			t.Errorf("%s: got %v, want %s", ct, got.err, posgate.ETOOLARGE)
		}
	}
}

// promotionJSON and promotionXML render promotion i like a real import
// item, about 500 bytes each.
func promotionJSON(i int) string {
	return fmt.Sprintf(`{"id":"P%06d","name":"Promotion %d: 2 off any large coffee with a pastry","useForAllCategories":false,"useForAllProducts":true,`+
		`"locationIds":["295","296","297"],"categoryIds":["C-%d","C-2"],"productIds":["SKU-%d","SKU-2","SKU-3"],`+
		`"promotionValidities":[{"startDate":"2024-05-01T00:00:00Z","endDate":"2024-12-31T23:59:59Z",`+
		`"recurrence":{"daysOfWeek":["Sunday","Saturday"],"startDate":"2024-05-01T08:00:00","endDate":"2024-05-01T20:00:00"}}],`+
		`"promotionResults":[{"promotionType":"Amount","value":2.5}]}`, i, i, i%50, i)
}

func promotionXML(i int) string {
	return fmt.Sprintf(`<items><id>P%06d</id><name>Promotion %d: 2 off any large coffee</name><useForAllCategories>false</useForAllCategories>`+
		`<useForAllProducts>true</useForAllProducts><locationIds>295</locationIds><locationIds>296</locationIds>`+
		`<categoryIds>C-%d</categoryIds><productIds>SKU-%d</productIds>`+
		`<promotionValidities><startDate>2024-05-01T00:00:00Z</startDate><endDate>2024-12-31T23:59:59Z</endDate>`+
		`<recurrence><daysOfWeek>Sunday</daysOfWeek><daysOfWeek>Saturday</daysOfWeek></recurrence></promotionValidities>`+
		`<promotionResults><promotionType>Amount</promotionType><value>2.5</value></promotionResults></items>`, i, i, i%50, i)
}

// generator produces prefix, n items joined by sep, and suffix, on demand:
// a body of any size without holding it in memory.
type generator struct {
	prefix, sep, suffix string
	item                func(int) string
	n, next             int // next: 0 prefix, 1..n items, n+1 suffix
	buf                 []byte
	size                int64
}

func (g *generator) Read(p []byte) (int, error) {
	for len(g.buf) == 0 {
		switch {
		case g.next == 0:
			g.buf = append(g.buf, g.prefix...)
		case g.next <= g.n:
			if g.next > 1 {
				g.buf = append(g.buf, g.sep...)
			}
			g.buf = append(g.buf, g.item(g.next-1)...)
		case g.next == g.n+1:
			g.buf = append(g.buf, g.suffix...)
		default:
			return 0, io.EOF
		}
		g.next++
	}
	n := copy(p, g.buf)
	g.buf = g.buf[n:]
	g.size += int64(n)
	return n, nil
}

func jsonImport(n int) *generator {
	return &generator{prefix: `{"items":[`, sep: ",", suffix: `]}`, item: promotionJSON, n: n}
}

func xmlImport(n int) *generator {
	return &generator{prefix: `<?xml version="1.0" encoding="utf-8"?><PromotionImportDto>`, sep: "\n", suffix: `</PromotionImportDto>`, item: promotionXML, n: n}
}

// TestStreamArrayMemory streams a promotion import of 100,000 items (about
// 50 MB) over HTTP and checks that the heap stays bounded by a few items,
// not by the body. Under -short, 40,000 items (about 20 MB) and half the
// bound: a body held whole would still pass it.
func TestStreamArrayMemory(t *testing.T) {
	items, maxGrowth := 100_000, uint64(16<<20)
	if testing.Short() {
		items, maxGrowth = 40_000, 8<<20
	}
	for _, tc := range []struct {
		ct   string
		body *generator
	}{
		{"application/json", jsonImport(items)},
		{"application/xml", xmlImport(items)},
	} {
		t.Run(tc.ct, func(t *testing.T) {
			var base, peak, total, mallocs uint64
			post := newServer(t, 0, func(r *http.Request) outcome {
				var ms runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&ms)
				base, peak = ms.HeapAlloc, ms.HeapAlloc
				startTotal, startMallocs := ms.TotalAlloc, ms.Mallocs
				count := 0
				err := StreamArray(r, "items", Options{DisallowUnknown: true}, func(i int, p *promotionDTO) error {
					if p.ID != fmt.Sprintf("P%06d", i) || len(p.PromotionValidities) != 1 || p.PromotionResults[0].Value != 2.5 {
						return fmt.Errorf("item %d decoded as %+v", i, p)
					}
					if count++; count%2000 == 0 {
						runtime.ReadMemStats(&ms)
						peak = max(peak, ms.HeapAlloc)
					}
					return nil
				})
				runtime.ReadMemStats(&ms)
				total, mallocs = ms.TotalAlloc-startTotal, ms.Mallocs-startMallocs
				return outcome{count, err}
			})
			got := post(tc.ct, tc.body)
			if got.err != nil || got.value != items {
				t.Fatalf("streamed %v items, error %v; want %d, none", got.value, got.err, items)
			}
			growth := peak - base
			t.Logf("%s: body %.1f MB, %d items; heap at start %.1f MB, peak growth %.1f MB; allocated %.0f MB in %d allocations (%.0f per item)",
				tc.ct, float64(tc.body.size)/1e6, items, float64(base)/1e6, float64(growth)/1e6, float64(total)/1e6, mallocs, float64(mallocs)/float64(items))
			if tc.body.size < int64(items)*450 {
				t.Errorf("body was only %d bytes", tc.body.size)
			}
			if growth > maxGrowth {
				t.Errorf("heap grew by %d bytes while streaming, want at most %d", growth, maxGrowth)
			}
		})
	}
}
