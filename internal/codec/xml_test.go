package codec

import (
	"strings"
	"testing"

	"github.com/posgate/posgate"
)

func TestDecodeXMLRules(t *testing.T) {
	const ct = "application/xml"
	strict := Options{DisallowUnknown: true}
	want := &startInteractionDTO{"T1", "L1"}
	cases := []decodeCase{
		{name: "valid", ct: ct, body: `<StartInteractionDto><terminalId>T1</terminalId><posLocationId>L1</posLocationId></StartInteractionDto>`, want: want},
		{name: "prolog, comments, namespaces, any root name", ct: ct, opts: strict, body: `<?xml version="1.0" encoding="utf-8"?>
<!-- a POS request -->
<Whatever xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns="urn:pos" version="2">
  <terminalId lang="en">T1</terminalId><!-- c -->
  <posLocationId>L1</posLocationId>
</Whatever>
<!-- end -->
`, want: want},
		{name: "byte order mark", ct: ct, body: "\uFEFF<?xml version=\"1.0\" encoding=\"utf-8\"?><r><terminalId>T1</terminalId><posLocationId>L1</posLocationId></r>", want: want},
		{name: "unknown disallowed", ct: ct, opts: strict, body: `<r><terminalID>T1</terminalID><posLocationId>L1</posLocationId></r>`,
			code: posgate.EINVALID, fields: field("terminalID", "The property 'terminalID' is not allowed.")},
		{name: "unknown ignored and case-sensitive", ct: ct, body: `<r><terminalID>T1</terminalID><posLocationId>L1</posLocationId><x><y>1</y><y>2</y></x></r>`,
			want: &startInteractionDTO{PosLocationID: "L1"}},
		{name: "duplicate", ct: ct, body: `<r><terminalId>a</terminalId><terminalId>b</terminalId></r>`,
			code: posgate.EINVALID, fields: field("terminalId", "The property 'terminalId' is given more than once.")},
		{name: "string with children", ct: ct, body: `<r><terminalId><id>a</id></terminalId></r>`,
			code: posgate.EINVALID, fields: field("terminalId", "The terminalId field must be a string.")},
		{name: "empty root", ct: ct, body: `<r/>`, want: &startInteractionDTO{}},
		{name: "root text", ct: ct, body: `<r>T1</r>`, code: posgate.EINVALID, fields: body("The root element must contain one child element per property.")},
		{name: "nil root", ct: ct, body: `<r xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:nil="true"/>`,
			code: posgate.EINVALID, fields: body("The root element must contain one child element per property.")},
		{name: "empty", ct: ct, body: ``, code: posgate.EINVALID, fields: body("The request body is empty.")},
		{name: "blank", ct: ct, body: "\n  ", code: posgate.EINVALID, fields: body("The request body is empty.")},
		{name: "no root", ct: ct, body: `<?xml version="1.0"?><!-- nothing -->`, code: posgate.EINVALID, fields: body("The request body is not valid XML: there is no root element.")},
		{name: "text before root", ct: ct, body: `hello<r/>`, code: posgate.EINVALID, fields: body("The request body is not valid XML: there is text before the root element.")},
		{name: "JSON sent as XML", ct: ct, body: `{"terminalId":"T1"}`, code: posgate.EINVALID, fields: body("The request body is not valid XML: there is text before the root element.")},
		{name: "second root", ct: ct, body: `<r/><r/>`, code: posgate.EINVALID, fields: body("The request body is not valid XML: there is more than one root element.")},
		{name: "text after root", ct: ct, body: `<r/> x`, code: posgate.EINVALID, fields: body("The request body is not valid XML: there is text after the root element.")},
		{name: "mismatched tags", ct: ct, body: "<r>\n<terminalId>a</posLocationId></r>",
			code: posgate.EINVALID, fields: body("The request body is not valid XML: element <terminalId> closed by </posLocationId> (line 2).")},
		{name: "truncated", ct: ct, body: `<r><terminalId>a</terminalId>`, code: posgate.EINVALID, fields: body("The request body is not valid XML: unexpected EOF (line 1).")},
		{name: "undefined entity", ct: ct, body: `<r><terminalId>&xxe;</terminalId></r>`,
			code: posgate.EINVALID, fields: body("The request body is not valid XML: invalid character entity &xxe; (line 1).")},
		{name: "predefined entities and CDATA", ct: ct, body: `<r><terminalId>a&lt;&amp;&#65;</terminalId><posLocationId><![CDATA[<L1>]]></posLocationId></r>`,
			want: &startInteractionDTO{"a<&A", "<L1>"}},
		{name: "XXE", ct: ct, body: `<?xml version="1.0"?><!DOCTYPE r [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><r><terminalId>&xxe;</terminalId></r>`,
			code: posgate.EINVALID, fields: body("The request body is not valid XML: DOCTYPE and entity declarations are not allowed.")},
		{name: "billion laughs", ct: ct, body: `<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]><r><terminalId>&lol2;</terminalId></r>`,
			code: posgate.EINVALID, fields: body("The request body is not valid XML: DOCTYPE and entity declarations are not allowed.")},
		{name: "DOCTYPE after root", ct: ct, body: `<r/><!DOCTYPE r>`,
			code: posgate.EINVALID, fields: body("The request body is not valid XML: DOCTYPE and entity declarations are not allowed.")},
		{name: "too deep", ct: ct, body: "<r>" + strings.Repeat("<x>", 70) + strings.Repeat("</x>", 70) + "</r>",
			code: posgate.EINVALID, fields: body("The request body is not valid XML: elements are nested more than 64 levels deep.")},
		{name: "64 levels", ct: ct, body: "<r>" + strings.Repeat("<x>", 63) + strings.Repeat("</x>", 63) + "<terminalId>T1</terminalId></r>",
			want: &startInteractionDTO{TerminalID: "T1"}},
		{name: "other encoding", ct: ct, body: `<?xml version="1.0" encoding="ISO-8859-1"?><r/>`,
			code: posgate.EINVALID, fields: body(`The request body is not valid XML: encoding "ISO-8859-1" declared but Decoder.CharsetReader is nil.`)},
		{name: "invalid UTF-8", ct: ct, body: "<r><terminalId>\xff</terminalId></r>",
			code: posgate.EINVALID, fields: body("The request body is not valid XML: invalid UTF-8 (line 1).")},
	}
	runDecodeCases[startInteractionDTO](t, cases)
}

func TestDecodeXMLTypes(t *testing.T) {
	const ct = "text/xml"
	const xsi = `xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"`
	strict := Options{DisallowUnknown: true}
	typeErr := func(path, what string) map[string][]string {
		return field(path, "The "+path+" field must be "+what+".")
	}
	cases := []decodeCase{
		{name: "every type", ct: ct, opts: strict, body: `<AllTypes>
  <s> x </s><ps>y</ps><b>true</b><pb> false </pb><i>-1</i><pi>2</pi><i32>2147483647</i32><pi32>-2147483648</pi32>
  <i64>9007199254740993</i64><pi64>0</pi64><f>1.5</f><pf>-2e3</pf>
  <t>2024-05-01T10:00:00+02:00</t><pt>2024-05-01T10:00:00.5Z</pt>
  <l>a</l><li>1</li><l>b</l><li>2</li>
  <info><title>T</title><items><k>v</k><n xsi:nil="true" ` + xsi + `/></items></info>
  <obj><title/></obj><m><a>b</a></m>
</AllTypes>`, want: &allTypes{
			S: " x ", PS: ptr("y"), B: true, PB: ptr(false), I: -1, PI: ptr(2), I32: 2147483647, PI32: ptr(int32(-2147483648)),
			I64: 9007199254740993, PI64: ptr(int64(0)), F: 1.5, PF: ptr(-2e3),
			T: date("2024-05-01T08:00:00Z"), PT: ptr(date("2024-05-01T10:00:00.5Z")), L: []string{"a", "b"}, LI: []int32{1, 2},
			Info: []infoDTO{{Title: ptr("T"), Items: map[string]*string{"k": ptr("v"), "n": nil}}}, Obj: &infoDTO{}, M: map[string]*string{"a": ptr("b")},
		}},
		{name: "empty elements", ct: ct, body: `<r><s/><ps/><b></b><pb/><i/><pi/><f/><pf/><t/><pt/><obj/><m/></r>`,
			want: &allTypes{M: map[string]*string{}}},
		{name: "xsi:nil", ct: ct, body: `<r ` + xsi + `><s xsi:nil="true">ignored</s><ps xsi:nil="true"/><pi xsi:nil="1">5</pi><obj xsi:nil="true"><title>x</title></obj><l xsi:nil="true"/></r>`,
			want: &allTypes{L: []string{""}}},
		{name: "undeclared xsi prefix", ct: ct, body: `<r><ps xsi:nil="true"/><pt xsi:nil="false">2024-05-01</pt></r>`,
			want: &allTypes{PT: ptr(date("2024-05-01T00:00:00Z"))}},
		{name: "empty string entries", ct: ct, body: `<r><l/><l>a</l><l></l></r>`, want: &allTypes{L: []string{"", "a", ""}}},
		{name: "non-pointer struct entry", ct: ct, body: `<r><info/><info><title>t</title></info></r>`, want: &allTypes{Info: []infoDTO{{}, {Title: ptr("t")}}}},
		{name: "string", ct: ct, body: `<r><s><b>bold</b></s></r>`, code: posgate.EINVALID, fields: typeErr("s", "a string")},
		{name: "*string", ct: ct, body: `<r><ps>a<x/>b</ps></r>`, code: posgate.EINVALID, fields: typeErr("ps", "a string")},
		{name: "bool", ct: ct, body: `<r><b>yes</b></r>`, code: posgate.EINVALID, fields: typeErr("b", "a boolean")},
		{name: "bool capitalised", ct: ct, body: `<r><pb>True</pb></r>`, code: posgate.EINVALID, fields: typeErr("pb", "a boolean")},
		{name: "bool as number", ct: ct, body: `<r><pb>1</pb></r>`, code: posgate.EINVALID, fields: typeErr("pb", "a boolean")},
		{name: "int", ct: ct, body: `<r><i>abc</i></r>`, code: posgate.EINVALID, fields: typeErr("i", "an integer")},
		{name: "*int fraction", ct: ct, body: `<r><pi>1.5</pi></r>`, code: posgate.EINVALID, fields: typeErr("pi", "an integer")},
		{name: "int32 over", ct: ct, body: `<r><i32>2147483648</i32></r>`, code: posgate.EINVALID, fields: typeErr("i32", "an integer")},
		{name: "*int32 plus sign", ct: ct, body: `<r><pi32>+1</pi32></r>`, code: posgate.EINVALID, fields: typeErr("pi32", "an integer")},
		{name: "int64 two numbers", ct: ct, body: `<r><i64>1 2</i64></r>`, code: posgate.EINVALID, fields: typeErr("i64", "an integer")},
		{name: "*int64 object", ct: ct, body: `<r><pi64><v>1</v></pi64></r>`, code: posgate.EINVALID, fields: typeErr("pi64", "an integer")},
		{name: "float64", ct: ct, body: `<r><f>1,5</f></r>`, code: posgate.EINVALID, fields: typeErr("f", "a number")},
		{name: "*float64 NaN", ct: ct, body: `<r><pf>NaN</pf></r>`, code: posgate.EINVALID, fields: typeErr("pf", "a number")},
		{name: "time", ct: ct, body: `<r><t>yesterday</t></r>`, code: posgate.EINVALID, fields: typeErr("t", "a date-time (ISO 8601)")},
		{name: "*time", ct: ct, body: `<r><pt>2024-05-01T10:00</pt></r>`, code: posgate.EINVALID, fields: typeErr("pt", "a date-time (ISO 8601)")},
		{name: "slice entry", ct: ct, body: `<r><l>a</l><l><x/></l></r>`, code: posgate.EINVALID, fields: typeErr("l[1]", "a string")},
		{name: "int32 slice entry", ct: ct, body: `<r><li>1</li><li>x</li></r>`, code: posgate.EINVALID, fields: typeErr("li[1]", "an integer")},
		{name: "struct slice entry", ct: ct, body: `<r><info>text</info></r>`, code: posgate.EINVALID, fields: typeErr("info[0]", "an object")},
		{name: "nested string", ct: ct, body: `<r><info/><info><title><a/></title></info></r>`, code: posgate.EINVALID, fields: typeErr("info[1].title", "a string")},
		{name: "nested map value", ct: ct, body: `<r><info><items><k><x/></k></items></info></r>`, code: posgate.EINVALID, fields: typeErr("info[0].items.k", "a string")},
		{name: "struct", ct: ct, body: `<r><obj>text</obj></r>`, code: posgate.EINVALID, fields: typeErr("obj", "an object")},
		{name: "struct mixed content", ct: ct, body: `<r><obj>text<title>t</title></obj></r>`, code: posgate.EINVALID, fields: typeErr("obj", "an object")},
		{name: "map", ct: ct, body: `<r><m>x</m></r>`, code: posgate.EINVALID, fields: typeErr("m", "an object")},
		{name: "nested unknown", ct: ct, opts: strict, body: `<r><info><title>a</title><Title>b</Title></info></r>`,
			code: posgate.EINVALID, fields: field("info[0].Title", "The property 'info[0].Title' is not allowed.")},
		{name: "unknown after type error", ct: ct, opts: strict, body: `<r><b>x</b><zz/></r>`, code: posgate.EINVALID, fields: typeErr("b", "a boolean")},
		{name: "nested duplicate", ct: ct, body: `<r><info><items><k>a</k><k>b</k></items></info></r>`,
			code: posgate.EINVALID, fields: field("info[0].items.k", "The property 'info[0].items.k' is given more than once.")},
		{name: "duplicate struct", ct: ct, body: `<r><obj/><obj/></r>`,
			code: posgate.EINVALID, fields: field("obj", "The property 'obj' is given more than once.")},
		{name: "json:- is unknown", ct: ct, opts: strict, body: `<r><Skip>x</Skip></r>`, code: posgate.EINVALID, fields: field("Skip", "The property 'Skip' is not allowed.")},
	}
	runDecodeCases[allTypes](t, cases)
}

func TestDecodeXMLNested(t *testing.T) {
	const ct = "application/xml"
	cases := []decodeCase{
		{name: "promotion import", ct: ct, opts: Options{DisallowUnknown: true}, body: `<PromotionImportDto>
  <items>
    <id>P1</id><name>Spring</name><useForAllCategories>true</useForAllCategories><useForAllProducts>false</useForAllProducts>
    <locationIds>295</locationIds><locationIds>296</locationIds>
    <promotionValidities>
      <startDate>2024-05-01T00:00:00Z</startDate><endDate>2024-05-31T23:59:59Z</endDate>
      <recurrence><daysOfWeek>Sunday</daysOfWeek><daysOfWeek>Saturday</daysOfWeek><startDate>2024-05-01T08:00:00</startDate></recurrence>
    </promotionValidities>
    <promotionResults><promotionType>Amount</promotionType><value>2.5</value></promotionResults>
  </items>
  <items><id>P2</id><productIds>SKU-1</productIds></items>
</PromotionImportDto>`, want: &importDTO{Items: []promotionDTO{
			{ID: "P1", Name: "Spring", UseForAllCategories: true, LocationIDs: []string{"295", "296"},
				PromotionValidities: []validityDTO{{StartDate: date("2024-05-01T00:00:00Z"), EndDate: date("2024-05-31T23:59:59Z"),
					Recurrence: &recurrenceDTO{DaysOfWeek: []string{"Sunday", "Saturday"}, StartDate: ptr(date("2024-05-01T08:00:00Z"))}}},
				PromotionResults: []resultDTO{{PromotionType: "Amount", Value: 2.5}}},
			{ID: "P2", ProductIDs: []string{"SKU-1"}},
		}}},
		{name: "deep number", ct: ct, body: `<r><items/><items><promotionResults><value>abc</value></promotionResults></items></r>`, code: posgate.EINVALID,
			fields: field("items[1].promotionResults[0].value", "The items[1].promotionResults[0].value field must be a number.")},
		{name: "deep date", ct: ct, body: `<r><items/><items/><items/><items><promotionValidities><startDate>2024-13-01</startDate></promotionValidities></items></r>`, code: posgate.EINVALID,
			fields: field("items[3].promotionValidities[0].startDate", "The items[3].promotionValidities[0].startDate field must be a date-time (ISO 8601).")},
		{name: "deep duplicate", ct: ct, body: `<r><items><promotionValidities><recurrence/><recurrence/></promotionValidities></items></r>`, code: posgate.EINVALID,
			fields: field("items[0].promotionValidities[0].recurrence", "The property 'items[0].promotionValidities[0].recurrence' is given more than once.")},
	}
	runDecodeCases[importDTO](t, cases)
}
