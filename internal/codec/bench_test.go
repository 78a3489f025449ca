package codec

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// The benchmarks call the codec with in-memory requests so that they
// measure decoding, not the network.

// benchRequest returns a request whose body replays body on every reset.
func benchRequest(ct string, body []byte) (*http.Request, func()) {
	rd := bytes.NewReader(body)
	r := httptest.NewRequest(http.MethodPost, "/", nil)
	r.Header.Set("Content-Type", ct)
	r.Body = io.NopCloser(rd)
	return r, func() { rd.Reset(body) }
}

func benchmarkDecode(b *testing.B, ct, body string) {
	r, reset := benchRequest(ct, []byte(body))
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		reset()
		var dst searchDTO
		if err := Decode(r, &dst, Options{DisallowUnknown: true}); err != nil || dst.Code == nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeJSON(b *testing.B) {
	benchmarkDecode(b, "application/json; charset=utf-8",
		`{"code":"A1B2C3","email":"jane@example.com","phone":"+1 (555) 555-1234","posLocationId":"295"}`)
}

func BenchmarkDecodeXML(b *testing.B) {
	benchmarkDecode(b, "application/xml",
		`<SearchUserCouponsDto><code>A1B2C3</code><email>jane@example.com</email><phone>+1 (555) 555-1234</phone><posLocationId>295</posLocationId></SearchUserCouponsDto>`)
}

// BenchmarkStreamArray streams a promotion import of 10,000 items.
func BenchmarkStreamArray(b *testing.B) {
	const items = 10_000
	for _, bc := range []struct {
		name, ct string
		body     *generator
	}{
		{"JSON", "application/json", jsonImport(items)},
		{"XML", "application/xml", xmlImport(items)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			body, err := io.ReadAll(bc.body)
			if err != nil {
				b.Fatal(err)
			}
			r, reset := benchRequest(bc.ct, body)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				reset()
				n := 0
				err := StreamArray(r, "items", Options{}, func(i int, p *promotionDTO) error {
					n++
					return nil
				})
				if err != nil || n != items {
					b.Fatal(n, err)
				}
			}
		})
	}
}
