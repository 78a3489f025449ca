package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// probeRequests is how many requests probe sends.
const probeRequests = 20

// probe sends n of a scenario's requests, the jth rendered in Go from the
// key tuple pick(j), and checks every answer with sc.verify.
func probe(ctx context.Context, e *env, sc *scenario, path string, n int, pick func(j int) []string) error {
	for j := range n {
		k := pick(j)
		var body io.Reader
		if sc.body != "" {
			body = strings.NewReader(render(sc.body, k))
		}
		req, err := http.NewRequestWithContext(ctx, sc.method, e.BaseURL+render(path, k), body)
		if err != nil {
			return err
		}
		for _, h := range headersFor(sc, e) {
			req.Header.Set(h[0], h[1])
		}
		resp, err := e.HTTP.Do(req)
		if err != nil {
			return err
		}
		answer, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("probe %v: status %d: %.300s", k, resp.StatusCode, answer)
		}
		if err := sc.verify(answer); err != nil {
			return fmt.Errorf("probe %v: %w: %.300s", k, err, answer)
		}
	}
	return nil
}

// render fills a template's $1…$9 from the key tuple k, as the wrk script
// does.
func render(t string, k []string) string {
	var b strings.Builder
	for i := 0; i < len(t); i++ {
		if t[i] == '$' && i+1 < len(t) && t[i+1] >= '1' && t[i+1] <= '9' {
			if n := int(t[i+1] - '1'); n < len(k) {
				b.WriteString(k[n])
			}
			i++
			continue
		}
		b.WriteByte(t[i])
	}
	return b.String()
}

// verifySearch wants a coupon search answer with posStatus Accepted and at
// least one coupon: the keys come from stored coupons.
func verifySearch(body []byte) error {
	var out struct {
		Data      []json.RawMessage `json:"data"`
		PosStatus string            `json:"posStatus"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return err
	}
	if out.PosStatus != "Accepted" || len(out.Data) == 0 {
		return fmt.Errorf("posStatus %q with %d coupons, want Accepted with some", out.PosStatus, len(out.Data))
	}
	return nil
}

// verifyNonEmpty wants data.<field> to be a non-empty array.
func verifyNonEmpty(field string) func([]byte) error {
	return func(body []byte) error {
		var out struct {
			Data map[string]json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(body, &out); err != nil {
			return err
		}
		var list []json.RawMessage
		if err := json.Unmarshal(out.Data[field], &list); err != nil || len(list) == 0 {
			return fmt.Errorf("data.%s is empty or not a list", field)
		}
		return nil
	}
}

// verifyAccepted wants data.posStatus Accepted.
var verifyAccepted = verifyData("posStatus", "Accepted")

// verifyActiveAccount wants the settings lookup's data.accountStatus Active
// (docs/api.md §15.1), so that the row measures a served company.
var verifyActiveAccount = verifyData("accountStatus", "Active")

// verifyData wants the string data.<field> to be want.
func verifyData(field, want string) func([]byte) error {
	return func(body []byte) error {
		var out struct {
			Data map[string]json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(body, &out); err != nil {
			return err
		}
		var got string
		if err := json.Unmarshal(out.Data[field], &got); err != nil || got != want {
			return fmt.Errorf("%s %s, want %s", field, out.Data[field], want)
		}
		return nil
	}
}
