package codec

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/posgate/posgate"
)

func TestKindOf(t *testing.T) {
	cases := []struct {
		ct   string
		want Kind
	}{
		{"application/json", JSON},
		{"text/json", JSON},
		{"application/json-patch+json", JSON},
		{"application/problem+json", JSON},
		{"APPLICATION/JSON", JSON},
		{"application/json; charset=utf-8", JSON},
		{"application/json;charset=UTF-8", JSON},
		{`application/json; charset="utf-8"`, JSON},
		{"application/xml", XML},
		{"text/xml", XML},
		{"application/soap+xml", XML},
		{"Text/XML; Charset=utf-8", XML},
		{"", Unsupported},
		{"text/plain", Unsupported},
		{"multipart/form-data; boundary=x", Unsupported},
		{"application/x-www-form-urlencoded", Unsupported},
		{"application/json; charset=iso-8859-1", Unsupported},
		{"application/xml; charset=utf-16", Unsupported},
		{"application/+json", Unsupported},
		{"text/problem+json", Unsupported},
		{"application/jsonp", Unsupported},
		{"json", Unsupported},
		{"application/json; charset", Unsupported},
	}
	for _, tc := range cases {
		if got := KindOf(tc.ct); got != tc.want {
			t.Errorf("KindOf(%q) = %d, want %d", tc.ct, got, tc.want)
		}
	}
}

func TestDecodeContentTypes(t *testing.T) {
	const js = `{"terminalId":"T1","posLocationId":"L1"}`
	const xs = `<StartInteractionDto><terminalId>T1</terminalId><posLocationId>L1</posLocationId></StartInteractionDto>`
	want := &startInteractionDTO{TerminalID: "T1", PosLocationID: "L1"}
	var cases []decodeCase
	for _, ct := range []string{"application/json", "text/json", "application/json-patch+json", "application/vnd.pos+json", "application/json; charset=utf-8"} {
		cases = append(cases, decodeCase{name: ct, ct: ct, body: js, want: want})
	}
	for _, ct := range []string{"application/xml", "text/xml", "application/vnd.pos+xml", "text/xml; charset=utf-8"} {
		cases = append(cases, decodeCase{name: ct, ct: ct, body: xs, want: want})
	}
	for _, ct := range []string{"text/plain", "multipart/form-data; boundary=x", "application/x-www-form-urlencoded", "application/json; charset=latin1", "text/html"} {
		cases = append(cases, decodeCase{name: "415 " + ct, ct: ct, body: js, code: posgate.EUNSUPPORTED})
	}
	cases = append(cases, decodeCase{name: "415 no content type", body: js, code: posgate.EUNSUPPORTED})
	runDecodeCases[startInteractionDTO](t, cases)
}

func TestDecodeUnsupportedMessage(t *testing.T) {
	post := newServer(t, 0, decodeInto[startInteractionDTO](Options{}))
	for ct, msg := range map[string]string{
		"":           "The request has no Content-Type; send application/json or application/xml (charset utf-8).",
		"text/plain": `The content type "text/plain" is not supported; send application/json or application/xml (charset utf-8).`,
	} {
		got := post(ct, strings.NewReader(`{}`))
		if posgate.ErrorCode(got.err) != posgate.EUNSUPPORTED || posgate.ErrorMessage(got.err) != msg {
			t.Errorf("Content-Type %q: got %v, want %s %q", ct, got.err, posgate.EUNSUPPORTED, msg)
		}
	}
}

func TestDecodeJSONRules(t *testing.T) {
	const ct = "application/json"
	strict := Options{DisallowUnknown: true}
	cases := []decodeCase{
		{name: "valid", ct: ct, body: ` {"terminalId":"T1","posLocationId":"L1"} ` + "\n", want: &startInteractionDTO{"T1", "L1"}},
		{name: "unknown disallowed", ct: ct, opts: strict, body: `{"terminalID":"T1","posLocationId":"L1"}`,
			code: posgate.EINVALID, fields: field("terminalID", "The property 'terminalID' is not allowed.")},
		{name: "unknown ignored and case-sensitive", ct: ct, body: `{"terminalID":"T1","posLocationId":"L1","extra":{"a":[1,2]}}`,
			want: &startInteractionDTO{PosLocationID: "L1"}},
		{name: "duplicate", ct: ct, body: `{"terminalId":"a","terminalId":"b"}`,
			code: posgate.EINVALID, fields: field("terminalId", "The property 'terminalId' is given more than once.")},
		{name: "duplicate unknown", ct: ct, body: `{"x":1,"x":1}`,
			code: posgate.EINVALID, fields: field("x", "The property 'x' is given more than once.")},
		{name: "wrong type", ct: ct, body: `{"terminalId":5}`,
			code: posgate.EINVALID, fields: field("terminalId", "The terminalId field must be a string.")},
		{name: "null string is empty", ct: ct, body: `{"terminalId":null,"posLocationId":"L1"}`, want: &startInteractionDTO{PosLocationID: "L1"}},
		{name: "trailing object", ct: ct, body: `{"terminalId":"a"} {}`,
			code: posgate.EINVALID, fields: body("The request body is not valid JSON: invalid character '{' after top-level value at byte offset 19.")},
		{name: "trailing garbage", ct: ct, body: `{"terminalId":"a"}x`,
			code: posgate.EINVALID, fields: body("The request body is not valid JSON: invalid character 'x' after top-level value at byte offset 18.")},
		{name: "empty", ct: ct, body: ``, code: posgate.EINVALID, fields: body("The request body is empty.")},
		{name: "blank", ct: ct, body: " \r\n\t", code: posgate.EINVALID, fields: body("The request body is empty.")},
		{name: "top-level null", ct: ct, body: `null`, code: posgate.EINVALID, fields: body("The request body must be a JSON object.")},
		{name: "top-level array", ct: ct, body: `[{"terminalId":"a"}]`, code: posgate.EINVALID, fields: body("The request body must be a JSON object.")},
		{name: "top-level string", ct: ct, body: `"a"`, code: posgate.EINVALID, fields: body("The request body must be a JSON object.")},
		{name: "top-level garbage", ct: ct, body: `code=A1`,
			code: posgate.EINVALID, fields: body("The request body is not valid JSON: invalid character 'c' at start of value at byte offset 0.")},
		{name: "truncated", ct: ct, body: `{"terminalId":"a"`, code: posgate.EINVALID, fields: body("The request body is not valid JSON: unexpected end of input.")},
		{name: "offset counts leading whitespace", ct: ct, body: "\n\n  {\"terminalId\":\"a\" \"b\"}",
			code: posgate.EINVALID, fields: body("The request body is not valid JSON: invalid character '\"' after object value (expecting ',' or '}') at byte offset 22.")},
		{name: "top-level number after whitespace", ct: ct, body: "\n 12", code: posgate.EINVALID, fields: body("The request body must be a JSON object.")},
		{name: "missing value", ct: ct, body: `{"terminalId":}`,
			code: posgate.EINVALID, fields: body("The request body is not valid JSON: invalid character '}' at start of value at byte offset 14.")},
		{name: "invalid UTF-8", ct: ct, body: "{\"terminalId\":\"\xff\"}",
			code: posgate.EINVALID, fields: body("The request body is not valid JSON: invalid UTF-8 at byte offset 15.")},
	}
	runDecodeCases[startInteractionDTO](t, cases)
}

func TestDecodeJSONTypes(t *testing.T) {
	const ct = "application/json"
	strict := Options{DisallowUnknown: true}
	typeErr := func(path, what string) map[string][]string {
		return field(path, "The "+path+" field must be "+what+".")
	}
	full := `{"s":"x","ps":"y","b":true,"pb":false,"i":-1,"pi":2,"i32":2147483647,"pi32":-2147483648,"i64":9007199254740993,"pi64":0,
		"f":1.5,"pf":-2e3,"t":"2024-05-01T10:00:00+02:00","pt":"2024-05-01T10:00:00.5Z","l":["a","b"],"li":[1,2],
		"info":[{"title":"T","items":{"k":"v","n":null}}],"obj":{"title":null},"m":{"a":"b"}}`
	cases := []decodeCase{
		{name: "every type", ct: ct, opts: strict, body: full, want: &allTypes{
			S: "x", PS: ptr("y"), B: true, PB: ptr(false), I: -1, PI: ptr(2), I32: 2147483647, PI32: ptr(int32(-2147483648)),
			I64: 9007199254740993, PI64: ptr(int64(0)), F: 1.5, PF: ptr(-2e3),
			T: date("2024-05-01T08:00:00Z"), PT: ptr(date("2024-05-01T10:00:00.5Z")), L: []string{"a", "b"}, LI: []int32{1, 2},
			Info: []infoDTO{{Title: ptr("T"), Items: map[string]*string{"k": ptr("v"), "n": nil}}}, Obj: &infoDTO{}, M: map[string]*string{"a": ptr("b")},
		}},
		{name: "nulls", ct: ct, opts: strict, body: `{"s":null,"ps":null,"b":null,"pb":null,"i":null,"pi":null,"f":null,"pf":null,"t":null,"pt":null,"l":null,"info":null,"obj":null,"m":null}`,
			want: &allTypes{}},
		{name: "json:- is unknown", ct: ct, opts: strict, body: `{"Skip":"x"}`, code: posgate.EINVALID, fields: field("Skip", "The property 'Skip' is not allowed.")},
		{name: "string", ct: ct, body: `{"s":5}`, code: posgate.EINVALID, fields: typeErr("s", "a string")},
		{name: "*string", ct: ct, body: `{"ps":true}`, code: posgate.EINVALID, fields: typeErr("ps", "a string")},
		{name: "bool", ct: ct, body: `{"b":"true"}`, code: posgate.EINVALID, fields: typeErr("b", "a boolean")},
		{name: "*bool", ct: ct, body: `{"pb":1}`, code: posgate.EINVALID, fields: typeErr("pb", "a boolean")},
		{name: "int", ct: ct, body: `{"i":"1"}`, code: posgate.EINVALID, fields: typeErr("i", "an integer")},
		{name: "*int fraction", ct: ct, body: `{"pi":1.5}`, code: posgate.EINVALID, fields: typeErr("pi", "an integer")},
		{name: "int32 over", ct: ct, body: `{"i32":2147483648}`, code: posgate.EINVALID, fields: typeErr("i32", "an integer")},
		{name: "*int32 under", ct: ct, body: `{"pi32":-2147483649}`, code: posgate.EINVALID, fields: typeErr("pi32", "an integer")},
		{name: "int64", ct: ct, body: `{"i64":[]}`, code: posgate.EINVALID, fields: typeErr("i64", "an integer")},
		{name: "*int64", ct: ct, body: `{"pi64":{}}`, code: posgate.EINVALID, fields: typeErr("pi64", "an integer")},
		{name: "float64", ct: ct, body: `{"f":"1"}`, code: posgate.EINVALID, fields: typeErr("f", "a number")},
		{name: "*float64 range", ct: ct, body: `{"pf":1e999}`, code: posgate.EINVALID, fields: typeErr("pf", "a number")},
		{name: "time", ct: ct, body: `{"t":"yesterday"}`, code: posgate.EINVALID, fields: typeErr("t", "a date-time (ISO 8601)")},
		{name: "*time", ct: ct, body: `{"pt":5}`, code: posgate.EINVALID, fields: typeErr("pt", "a date-time (ISO 8601)")},
		{name: "time object", ct: ct, body: `{"pt":{"a":1}}`, code: posgate.EINVALID, fields: typeErr("pt", "a date-time (ISO 8601)")},
		{name: "slice", ct: ct, body: `{"l":"a"}`, code: posgate.EINVALID, fields: typeErr("l", "an array")},
		{name: "slice entry", ct: ct, body: `{"l":["a",1]}`, code: posgate.EINVALID, fields: typeErr("l[1]", "a string")},
		{name: "int32 slice entry", ct: ct, body: `{"li":[1,"2"]}`, code: posgate.EINVALID, fields: typeErr("li[1]", "an integer")},
		{name: "struct slice", ct: ct, body: `{"info":{}}`, code: posgate.EINVALID, fields: typeErr("info", "an array")},
		{name: "nested string", ct: ct, body: `{"info":[{},{"title":5}]}`, code: posgate.EINVALID, fields: typeErr("info[1].title", "a string")},
		{name: "nested map value", ct: ct, body: `{"info":[{"items":{"k":1}}]}`, code: posgate.EINVALID, fields: typeErr("info[0].items.k", "a string")},
		{name: "numeric map key", ct: ct, body: `{"m":{"0":1}}`, code: posgate.EINVALID, fields: typeErr("m.0", "a string")},
		{name: "struct", ct: ct, body: `{"obj":[]}`, code: posgate.EINVALID, fields: typeErr("obj", "an object")},
		{name: "map", ct: ct, body: `{"m":"x"}`, code: posgate.EINVALID, fields: typeErr("m", "an object")},
		{name: "nested unknown", ct: ct, opts: strict, body: `{"info":[{"title":"a","Title":"b"}]}`,
			code: posgate.EINVALID, fields: field("info[0].Title", "The property 'info[0].Title' is not allowed.")},
		{name: "nested duplicate", ct: ct, body: `{"info":[{"items":{"k":"a","k":"b"}}]}`,
			code: posgate.EINVALID, fields: field("info[0].items.k", "The property 'info[0].items.k' is given more than once.")},
	}
	runDecodeCases[allTypes](t, cases)
}

func TestDecodeJSONNestedPath(t *testing.T) {
	const ct = "application/json"
	cases := []decodeCase{
		{name: "deep date", ct: ct, body: `{"items":[{},{},{},{"promotionValidities":[{"startDate":"2024-13-01T00:00:00Z"}]}]}`, code: posgate.EINVALID,
			fields: field("items[3].promotionValidities[0].startDate", "The items[3].promotionValidities[0].startDate field must be a date-time (ISO 8601).")},
		{name: "deep number", ct: ct, body: `{"items":[{"promotionResults":[{"promotionType":"Amount","value":"abc"}]}]}`, code: posgate.EINVALID,
			fields: field("items[0].promotionResults[0].value", "The items[0].promotionResults[0].value field must be a number.")},
		{name: "deep array", ct: ct, body: `{"items":[{"promotionValidities":[{"recurrence":{"daysOfWeek":"Sunday"}}]}]}`, code: posgate.EINVALID,
			fields: field("items[0].promotionValidities[0].recurrence.daysOfWeek", "The items[0].promotionValidities[0].recurrence.daysOfWeek field must be an array.")},
		{name: "deep unknown", ct: ct, opts: Options{DisallowUnknown: true}, body: `{"items":[{"id":"1"},{"id":"2","recurrence":{}}]}`, code: posgate.EINVALID,
			fields: field("items[1].recurrence", "The property 'items[1].recurrence' is not allowed.")},
	}
	runDecodeCases[importDTO](t, cases)
}

func TestDecodeTimeForms(t *testing.T) {
	cases := []decodeCase{}
	for in, want := range map[string]string{
		"2024-05-01T10:00:00Z":           "2024-05-01T10:00:00Z",
		"2024-05-01T10:00:00-05:30":      "2024-05-01T15:30:00Z",
		"2024-05-01T10:00:00.123Z":       "2024-05-01T10:00:00.123Z",
		"2024-05-01T10:00:00":            "2024-05-01T10:00:00Z",
		"2024-05-01T10:00:00.1234567":    "2024-05-01T10:00:00.1234567Z",
		"2024-05-01":                     "2024-05-01T00:00:00Z",
		"2024-02-29T23:59:59.999999999Z": "2024-02-29T23:59:59.999999999Z",
	} {
		js := `{"t":"` + in + `","pt":"` + in + `"}`
		xs := `<r><t>` + in + `</t><pt> ` + in + ` </pt></r>`
		v := &allTypes{T: date(want), PT: ptr(date(want))}
		cases = append(cases,
			decodeCase{name: "json " + in, ct: "application/json", body: js, want: v},
			decodeCase{name: "xml " + in, ct: "application/xml", body: xs, want: v})
	}
	for _, in := range []string{"", "2024-13-01", "2023-02-29", "01/05/2024", "2024-05-01 10:00:00", "2024-05-01T10:00", "2024-05-01T25:00:00Z", "2024-05-01T10:00:00+25:00"} {
		cases = append(cases, decodeCase{name: "json bad " + in, ct: "application/json", body: `{"pt":"` + in + `"}`,
			code: posgate.EINVALID, fields: field("pt", "The pt field must be a date-time (ISO 8601).")})
	}
	runDecodeCases[allTypes](t, cases) // DeepEqual also compares the time zone: UTC
}

func TestDecodeTooLarge(t *testing.T) {
	big := `{"terminalId":"` + strings.Repeat("x", 4096) + `"}`
	bigXML := `<r><terminalId>` + strings.Repeat("x", 4096) + `</terminalId></r>`
	post := newServer(t, 1024, decodeInto[startInteractionDTO](Options{}))
	for ct, b := range map[string]string{"application/json": big, "application/xml": bigXML} {
		got := post(ct, strings.NewReader(b))
		if posgate.ErrorCode(got.err) != posgate.ETOOLARGE || posgate.ErrorMessage(got.err) != "The request body is larger than 1024 bytes." {
			t.Errorf("%s: got %v, want %s", ct, got.err, posgate.ETOOLARGE)
		}
	}
	// A body just under the cap decodes.
	small := `{"terminalId":"` + strings.Repeat("x", 1000) + `"}`
	if got := post("application/json", strings.NewReader(small)); got.err != nil {
		t.Errorf("body of %d bytes: %v", len(small), got.err)
	}
}

func TestDecodeReadError(t *testing.T) {
	for _, ct := range []string{"application/json", "application/xml"} {
		r := httptest.NewRequest(http.MethodPost, "/", iotest.ErrReader(errors.New("connection reset")))
		r.Header.Set("Content-Type", ct)
		checkError(t, Decode(r, &startInteractionDTO{}, Options{}), posgate.EINVALID, body("The request body could not be read."))
	}
}

func TestDecodeBadDestination(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{}`))
	r.Header.Set("Content-Type", "application/json")
	var s string
	for _, dst := range []any{startInteractionDTO{}, (*startInteractionDTO)(nil), &s, nil} {
		if err := Decode(r, dst, Options{}); posgate.ErrorCode(err) != posgate.EINTERNAL {
			t.Errorf("Decode into %T: %v, want a programming error", dst, err)
		}
	}
}

type baseDTO struct {
	PosLocationID string `json:"posLocationId"`
	TerminalID    string `json:"terminalId"`
}

// nodeDTO embeds a struct (its fields are inlined, the outer terminalId
// wins), uses a named string type and is recursive.
type nodeDTO struct {
	baseDTO
	TerminalID string         `json:"terminalId"`
	Status     posgate.Status `json:"status"`
	Children   []*nodeDTO     `json:"children"`
}

func TestDecodeEmbeddedNamedRecursive(t *testing.T) {
	strict := Options{DisallowUnknown: true}
	want := &nodeDTO{baseDTO: baseDTO{PosLocationID: "L1"}, TerminalID: "T1", Status: posgate.StatusActive,
		Children: []*nodeDTO{{Children: []*nodeDTO{nil, {Status: posgate.StatusDisabled}}}}}
	const badPath = "children[0].children[1].status"
	cases := []decodeCase{
		{name: "json", ct: "application/json", opts: strict, want: want,
			body: `{"posLocationId":"L1","terminalId":"T1","status":"Active","children":[{"children":[null,{"status":"Disabled"}]}]}`},
		{name: "xml", ct: "application/xml", opts: strict, want: want,
			body: `<n><posLocationId>L1</posLocationId><terminalId>T1</terminalId><status>Active</status><children><children/><children><status>Disabled</status></children></children></n>`},
		{name: "json deep type error", ct: "application/json", body: `{"children":[{"children":[{},{"status":1}]}]}`,
			code: posgate.EINVALID, fields: field(badPath, "The "+badPath+" field must be a string.")},
		{name: "xml deep type error", ct: "application/xml", body: `<n><children><children/><children><status><x/></status></children></children></n>`,
			code: posgate.EINVALID, fields: field(badPath, "The "+badPath+" field must be a string.")},
	}
	runDecodeCases[nodeDTO](t, cases)
}
