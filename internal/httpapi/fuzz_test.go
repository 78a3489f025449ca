package httpapi

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/auth"
	"github.com/posgate/posgate/internal/codec"
	"github.com/posgate/posgate/internal/importfile"
)

// Native fuzz targets of the HTTP layer's own parsing (seed corpora in
// testdata/fuzz/<target>; .ci/run runs each for a while after the tests).

// FuzzImportItems checks the promotion import's hand-written item decoder
// against the reflective decoder it stands in for (docs/api.md §9.2): on
// every body, JSON or XML, both accept the same items with the same values
// or refuse it with the same client-safe error.
func FuzzImportItems(f *testing.F) {
	for _, seed := range []string{
		`{"items":[{"id":"P1","name":"2 off","useForAllCategories":true,"locationIds":["L1","L1"],"categoryIds":null,
			"promotionValidities":[{"startDate":"2030-05-01","endDate":"2030-05-31T23:59:59+02:00","recurrence":{"daysOfWeek":["Saturday"],"startDate":"2030-05-01T08:00:00","endDate":null}}],
			"promotionResults":[{"promotionType":"Amount","value":2.5}],"extra":{"x":[1,2]}}]}`,
		`<PromotionImportDto><items><id>X1</id><name>10% off</name><locationIds>LOC123</locationIds><promotionResults><promotionType>Percentage</promotionType><value>10</value></promotionResults></items></PromotionImportDto>`,
		`{"items":[{"id":"B1","priority":-3,"stackable":true,"minQuantity":1.5,"minBasketAmount":10,"requiresCoupon":null,
			"promotionResults":[{"promotionType":"BuyXGetY","value":100,"buyQuantity":2,"getQuantity":1,"getProductIds":["M"],"maxApplications":null}]}]}`,
		`{"items":[{"priority":1.5}]}`, `{"items":[{"promotionResults":[{"buyQuantity":"2"}]}]}`, `{"items":[{"stackable":"yes"}]}`,
		`{"items":[{"id":7}]}`, `{"items":[{"value":"2"}]}`, `{"items":["x"]}`, `{"items":[{"id":"a","id":"b"}]}`,
		`{"items":[{"promotionValidities":[{"startDate":"0000-01-01T00:00:00+01:00"}]}]}`,
		`{"items":[{"promotionResults":[{"value":1e400}]}]}`,
	} {
		f.Add([]byte(seed), strings.HasPrefix(seed, "<"))
	}
	f.Fuzz(func(t *testing.T, body []byte, xml bool) {
		ct := "application/json"
		if xml {
			ct = "application/xml"
		}
		fast, fastErr := streamAll[importfile.PromotionItem](ct, body)
		slow, slowErr := streamAll[importfile.PlainPromotionItem](ct, body)
		if (fastErr == nil) != (slowErr == nil) {
			t.Fatalf("hand-written decoder: %v; reflective decoder: %v", fastErr, slowErr)
		}
		if fastErr != nil {
			checkClientSafe(t, fastErr, posgate.EINVALID, posgate.ETOOLARGE)
			if posgate.ErrorMessage(fastErr) != posgate.ErrorMessage(slowErr) {
				t.Fatalf("errors differ:\n%v\n%v", fastErr, slowErr)
			}
			return
		}
		if len(fast) != len(slow) {
			t.Fatalf("%d items, reflective decoder %d", len(fast), len(slow))
		}
		for i := range fast {
			if a, b := importfile.PromotionItem(slow[i]), fast[i]; !reflect.DeepEqual(normalTimes(&a), normalTimes(&b)) {
				t.Fatalf("item %d differs:\n%+v\n%+v", i, b, a)
			}
		}
	})
}

// streamAll decodes an import body's items into T.
func streamAll[T any](ct string, body []byte) ([]T, error) {
	r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	r.Header.Set("Content-Type", ct)
	var out []T
	err := codec.StreamArray(r, "items", codec.Options{}, func(_ int, it *T) error {
		out = append(out, *it)
		return nil
	})
	return out, err
}

// normalTimes makes an item's times comparable with reflect.DeepEqual
// (one instant has more than one time.Time representation).
func normalTimes(it *importfile.PromotionItem) *importfile.PromotionItem {
	norm := func(p **posgate.PromotionTime) {
		if *p != nil {
			t := (*p).Time()
			u := time.UnixMicro(t.UnixMicro()).UTC().Add(time.Duration(t.Nanosecond() % 1000))
			v := posgate.InstantTime(u)
			if (*p).IsWall() {
				v = posgate.WallTime(u)
			}
			*p = &v
		}
	}
	for i := range it.PromotionValidities {
		v := &it.PromotionValidities[i]
		norm(&v.StartDate)
		norm(&v.EndDate)
		if v.Recurrence != nil {
			norm(&v.Recurrence.StartDate)
			norm(&v.Recurrence.EndDate)
		}
	}
	return it
}

// checkClientSafe fails unless err is a *posgate.Error with one of codes
// and messages fit to show a client.
func checkClientSafe(t *testing.T, err error, codes ...string) {
	t.Helper()
	var e *posgate.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %T %v is not a *posgate.Error", err, err)
	}
	ok := false
	for _, c := range codes {
		ok = ok || e.Code == c
	}
	msgs := []string{posgate.ErrorMessage(err)}
	var paths []string
	for path, ms := range e.Fields {
		msgs = append(msgs, ms...)
		paths = append(paths, path)
	}
	for _, m := range msgs {
		// "%!" betrays a template fmt could not fill, unless it came in a
		// property name the client sent, which a message quotes back.
		template := m
		for _, p := range paths {
			template = strings.ReplaceAll(template, p, "")
		}
		ok = ok && m != "" && utf8.ValidString(m) && !strings.Contains(template, "%!")
	}
	if !ok {
		t.Fatalf("error %q (code %s) is not a client error fit to show", posgate.ErrorMessage(err), e.Code)
	}
}

// keyStore is the store the identity provider needs for the header fuzzer:
// one signing key and one client.
type keyStore struct {
	key *posgate.SigningKey
}

func (k *keyStore) FindClient(_ context.Context, id string) (*posgate.Client, error) {
	if id != "pos-1" {
		return nil, posgate.NotFound("client", id)
	}
	return &posgate.Client{ID: id, POSSystemID: "clover", Scopes: []string{posgate.ScopePOSIntegration}}, nil
}
func (k *keyStore) CreateSigningKey(_ context.Context, key *posgate.SigningKey) error {
	k.key = key
	return nil
}
func (k *keyStore) ListSigningKeys(context.Context) ([]*posgate.SigningKey, error) {
	if k.key == nil {
		return nil, nil
	}
	return []*posgate.SigningKey{k.key}, nil
}
func (k *keyStore) DeleteSigningKey(context.Context, string) error { return nil }

// FuzzAuthorization checks the bearer parsing of every POS and operator
// request (docs/api.md §3.6) on any Authorization header: a refusal is a
// 401 *posgate.Error whose WWW-Authenticate challenge is one well-formed
// header line; an acceptance speaks for the one client a token was issued
// to, and only for a header that carries that token exactly.
func FuzzAuthorization(f *testing.F) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	a, err := auth.New(context.Background(), &keyStore{}, auth.Config{Issuer: "http://idp.test", Now: func() time.Time { return now }})
	if err != nil {
		f.Fatal(err)
	}
	tok, _, err := a.Issue(context.Background(), &posgate.Client{ID: "pos-1", POSSystemID: "clover"}, []string{posgate.ScopePOSIntegration})
	if err != nil {
		f.Fatal(err)
	}
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(other)
	for _, seed := range []string{"Bearer " + tok, "bearer " + tok, "Bearer  " + tok, "Bearer " + tok + " ", "Basic eDp5", "Bearer",
		"Bearer " + strings.Replace(tok, ".", "..", 1), "Bearer a.b.c", "Bearer " + tok[:len(tok)-2], "Bearer \"" + string(der[:8]) + "\"\r\nX: y"} {
		f.Add(seed)
	}
	s := &Server{auth: a}
	f.Fuzz(func(t *testing.T, header string) {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header["Authorization"] = []string{header}
		p, err := s.authenticate(r)
		if err == nil {
			scheme, _, _ := strings.Cut(header, " ")
			if !strings.EqualFold(scheme, "Bearer") || p.ClientID != "pos-1" || p.POSSystemID != "clover" {
				t.Fatalf("accepted %q as %+v", header, p)
			}
			return
		}
		checkClientSafe(t, err, posgate.EUNAUTHORIZED)
		ch := bearerChallenge(posgate.ErrorMessage(err))
		if strings.ContainsAny(ch, "\r\n\x00") || !strings.HasPrefix(ch, `Bearer realm="posgate"`) || strings.Count(ch, `"`)%2 != 0 {
			t.Fatalf("challenge %q", ch)
		}
	})
}
