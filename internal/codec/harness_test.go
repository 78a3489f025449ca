package codec

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/posgate/posgate"
)

// Destination types shaped like posgate's request DTOs (docs/api.md §4–§9).

type startInteractionDTO struct {
	TerminalID    string `json:"terminalId"`
	PosLocationID string `json:"posLocationId"`
}

type searchDTO struct {
	Code          *string `json:"code"`
	Email         *string `json:"email"`
	Phone         *string `json:"phone"`
	PosLocationID *string `json:"posLocationId"`
}

type infoDTO struct {
	Title *string            `json:"title"`
	Items map[string]*string `json:"items"`
}

// allTypes has a field of every supported type.
type allTypes struct {
	S    string             `json:"s"`
	PS   *string            `json:"ps"`
	B    bool               `json:"b"`
	PB   *bool              `json:"pb"`
	I    int                `json:"i"`
	PI   *int               `json:"pi"`
	I32  int32              `json:"i32"`
	PI32 *int32             `json:"pi32"`
	I64  int64              `json:"i64"`
	PI64 *int64             `json:"pi64"`
	F    float64            `json:"f"`
	PF   *float64           `json:"pf"`
	T    time.Time          `json:"t"`
	PT   *time.Time         `json:"pt"`
	L    []string           `json:"l"`
	LI   []int32            `json:"li"`
	Info []infoDTO          `json:"info"`
	Obj  *infoDTO           `json:"obj"`
	M    map[string]*string `json:"m"`
	Skip string             `json:"-"`
}

type recurrenceDTO struct {
	DaysOfWeek []string   `json:"daysOfWeek"`
	StartDate  *time.Time `json:"startDate"`
	EndDate    *time.Time `json:"endDate"`
}

type validityDTO struct {
	StartDate  time.Time      `json:"startDate"`
	EndDate    time.Time      `json:"endDate"`
	Recurrence *recurrenceDTO `json:"recurrence"`
}

type resultDTO struct {
	PromotionType string  `json:"promotionType"`
	Value         float64 `json:"value"`
}

type promotionDTO struct {
	ID                  string        `json:"id"`
	Name                string        `json:"name"`
	UseForAllCategories bool          `json:"useForAllCategories"`
	UseForAllProducts   bool          `json:"useForAllProducts"`
	LocationIDs         []string      `json:"locationIds"`
	CategoryIDs         []string      `json:"categoryIds"`
	ProductIDs          []string      `json:"productIds"`
	PromotionValidities []validityDTO `json:"promotionValidities"`
	PromotionResults    []resultDTO   `json:"promotionResults"`
}

type importDTO struct {
	Items []promotionDTO `json:"items"`
}

// outcome is what a test server's handler produced for one request.
type outcome struct {
	value any
	err   error
}

// newServer starts a real HTTP server on 127.0.0.1:0 whose handler caps the
// body at limit bytes (0: no cap) and runs handle; the returned function
// posts a body with a Content-Type ("" sends none) and returns the outcome.
func newServer(t testing.TB, limit int64, handle func(r *http.Request) outcome) func(ct string, body io.Reader) outcome {
	results := make(chan outcome, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if limit > 0 {
			r.Body = http.MaxBytesReader(w, r.Body, limit)
		}
		results <- handle(r)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	return func(ct string, body io.Reader) outcome {
		req, err := http.NewRequest(http.MethodPost, srv.URL, body)
		if err != nil {
			t.Fatal(err)
		}
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		resp, err := srv.Client().Do(req)
		if err == nil {
			resp.Body.Close()
		} else if limit == 0 {
			t.Errorf("POST: %v", err) // with a cap the server may close early
		}
		select {
		case o := <-results:
			return o
		case <-time.After(20 * time.Second):
			t.Fatal("handler did not run")
			return outcome{}
		}
	}
}

// decodeInto returns a handler that decodes into a fresh T.
func decodeInto[T any](opts Options) func(r *http.Request) outcome {
	return func(r *http.Request) outcome {
		v := new(T)
		err := Decode(r, v, opts)
		return outcome{v, err}
	}
}

// decodeCase is one request and what Decode must make of it: want when
// code is "", else an error with code, and with fields for EINVALID.
type decodeCase struct {
	name   string
	ct     string
	body   string
	opts   Options
	want   any
	code   string
	fields map[string][]string
}

// runDecodeCases runs cases through a real server decoding into T.
func runDecodeCases[T any](t *testing.T, cases []decodeCase) {
	t.Helper()
	posts := map[Options]func(string, io.Reader) outcome{}
	for _, o := range []Options{{}, {DisallowUnknown: true}} {
		posts[o] = newServer(t, 0, decodeInto[T](o))
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := posts[tc.opts](tc.ct, strings.NewReader(tc.body))
			if tc.code != "" {
				checkError(t, got.err, tc.code, tc.fields)
				return
			}
			if got.err != nil {
				t.Fatalf("error %v (fields %v), want none", got.err, fieldsOf(got.err))
			}
			if !reflect.DeepEqual(got.value, tc.want) {
				t.Errorf("decoded\n %+v\nwant\n %+v", deref(got.value), deref(tc.want))
			}
		})
	}
}

// checkError asserts that err is a *posgate.Error with code and fields.
func checkError(t *testing.T, err error, code string, fields map[string][]string) {
	t.Helper()
	var e *posgate.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T), want a *posgate.Error %s %v", err, err, code, fields)
	}
	if e.Code != code || !reflect.DeepEqual(e.Fields, fields) {
		t.Errorf("error %s %q %#v\nwant  %s %#v", e.Code, e.Message, e.Fields, code, fields)
	}
}

func fieldsOf(err error) map[string][]string {
	var e *posgate.Error
	if errors.As(err, &e) {
		return e.Fields
	}
	return nil
}

func deref(v any) any {
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && !rv.IsNil() {
		return rv.Elem().Interface()
	}
	return v
}

func ptr[T any](v T) *T { return &v }

// body is a shorthand for a "$" (whole body) error.
func body(msg string) map[string][]string { return map[string][]string{"$": {msg}} }

// field is a shorthand for a one-property error.
func field(path, msg string) map[string][]string { return map[string][]string{path: {msg}} }

func date(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}
