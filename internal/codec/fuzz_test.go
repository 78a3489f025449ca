package codec

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-json-experiment/json"

	"github.com/posgate/posgate"
)

// Native fuzz targets of the body decoders (seed corpora in
// testdata/fuzz/<target>; .ci/run runs each for a while after the tests).
// Each asserts what every client relies on: no input panics; a refused body
// is a *posgate.Error of a client's kind with a message fit to show; and an
// accepted body means what it says: its value, written as JSON and decoded
// again, is the same value.

// contentTypes are the body kinds the fuzzers switch between.
var contentTypes = []string{"application/json", "application/xml"}

func request(ct string, body []byte) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	r.Header.Set("Content-Type", ct)
	return r
}

// checkClientError fails unless err is what a client may be shown: a
// *posgate.Error of a client's code whose message and field messages are
// non-empty UTF-8 without Go's formatting leftovers.
func checkClientError(t *testing.T, err error) {
	t.Helper()
	var e *posgate.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %T %v is not a *posgate.Error", err, err)
	}
	if e.Code != posgate.EINVALID && e.Code != posgate.ETOOLARGE {
		t.Fatalf("error code %s (%v) for a bad body", e.Code, err)
	}
	msgs := []string{posgate.ErrorMessage(err)}
	var paths []string
	for path, ms := range e.Fields {
		if path == "" {
			t.Fatalf("an error field without a path: %v", e.Fields)
		}
		msgs = append(msgs, ms...)
		paths = append(paths, path)
	}
	for _, m := range msgs {
		if m == "" || !utf8.ValidString(m) || strings.Contains(m, "codec:") {
			t.Fatalf("message %q is not fit for a client", m)
		}
		// "%!" is how fmt shows a verb it could not fill: a mistake in a
		// message's template. A property name the client sent may hold it
		// too, and is quoted back as it came ({"%!":1}), so the paths are
		// taken out before the template is judged.
		template := m
		for _, p := range paths {
			template = strings.ReplaceAll(template, p, "")
		}
		if strings.Contains(template, "%!") {
			t.Fatalf("message %q is not fit for a client", m)
		}
	}
}

// roundTrip writes v as JSON, decodes that with Decode into a fresh T and
// fails unless it writes the same JSON again.
func roundTrip[T any](t *testing.T, v *T, strict bool) {
	t.Helper()
	first, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		t.Fatalf("a decoded value does not encode: %v", err)
	}
	var again T
	if err := Decode(request("application/json", first), &again, Options{DisallowUnknown: strict}); err != nil {
		t.Fatalf("the re-encoded value %s does not decode: %v", first, err)
	}
	second, err := json.Marshal(&again, json.Deterministic(true))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, second) {
		t.Fatalf("decoded value changed on a round trip:\n%s\n%s", first, second)
	}
}

func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		`{"s":"a","ps":null,"b":true,"i":-3,"i32":7,"f":1.5e3,"t":"2030-05-01","pt":"2030-05-01T10:00:00+02:00","l":["x","y"],"li":[1],"info":[{"title":"T","items":{"k":"v","n":null}}],"obj":{"title":null},"m":{"a":"b"}}`,
		`<R><s>a</s><b>true</b><l>x</l><l>y</l><info><title>T</title><items><k>v</k></items></info><pt xsi:nil="true"/></R>`,
		`{"s":"a","s":"b"}`, `[]`, `{"f":1e400}`, `<!DOCTYPE x><R/>`, "\xef\xbb\xbf<R><i>2147483648</i></R>",
	} {
		f.Add([]byte(seed), strings.HasPrefix(seed, "<") || strings.HasPrefix(seed, "\xef"), false)
	}
	f.Fuzz(func(t *testing.T, body []byte, xml, strict bool) {
		var v allTypes
		err := Decode(request(contentTypes[b2i(xml)], body), &v, Options{DisallowUnknown: strict})
		if err != nil {
			checkClientError(t, err)
			return
		}
		roundTrip(t, &v, strict)
	})
}

// FuzzStreamArray decodes an import-shaped body item by item: an accepted
// body's items, written back as one JSON body, stream to the same items.
func FuzzStreamArray(f *testing.F) {
	for _, seed := range []string{
		`{"items":[{"id":"P1","name":"n","locationIds":["L1"],"promotionValidities":[{"startDate":"2030-01-01","recurrence":{"daysOfWeek":["Monday"],"startDate":"2030-01-01T08:00:00Z"}}],"promotionResults":[{"promotionType":"Amount","value":2}]}],"other":1}`,
		`<PromotionImportDto><items><id>X1</id><promotionResults><value>10</value></promotionResults></items><items><id>X2</id></items></PromotionImportDto>`,
		`{"items":[{"id":"a"},"x"]}`, `{"items":null}`, `{}`, `{"items":[{}]} x`,
	} {
		f.Add([]byte(seed), strings.HasPrefix(seed, "<"))
	}
	f.Fuzz(func(t *testing.T, body []byte, xml bool) {
		stream := func(ct string, b []byte) ([]promotionDTO, error) {
			var out []promotionDTO
			err := StreamArray(request(ct, b), "items", Options{}, func(i int, it *promotionDTO) error {
				if i != len(out) {
					t.Fatalf("item index %d after %d items", i, len(out))
				}
				out = append(out, *it)
				return nil
			})
			return out, err
		}
		items, err := stream(contentTypes[b2i(xml)], body)
		if err != nil {
			checkClientError(t, err)
			return
		}
		first, err := json.Marshal(importDTO{Items: items})
		if err != nil {
			t.Fatalf("decoded items do not encode: %v", err)
		}
		again, err := stream("application/json", first)
		if err != nil {
			t.Fatalf("re-encoded items %s do not stream: %v", first, err)
		}
		if second, _ := json.Marshal(importDTO{Items: again}); !bytes.Equal(first, second) {
			t.Fatalf("items changed on a round trip:\n%s\n%s", first, second)
		}
	})
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
