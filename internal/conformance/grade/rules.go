// Package grade grades a recording of a POS client's calls (internal/conformance/record)
// against the rules of the interface, each rule citing the section of
// docs/api.md it comes from, and writes the report as JSON and HTML.
package grade

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/posgate/posgate/internal/codec"
	"github.com/posgate/posgate/internal/conformance/record"
)

// Rule is one rule of the interface that a recording is graded against.
type Rule struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	// Cite is the section of docs/api.md the rule comes from, as a link
	// relative to the repository (docs/api.md#32-token-endpoint).
	Cite string `json:"cite"`
	// Section is that section's number (§3.2).
	Section string `json:"section"`
	// Description says what passes and what fails.
	Description string `json:"description"`

	grade func(calls []record.Call) (checked int, fails []Failure)
}

// The statuses of a rule in a report.
const (
	Pass         = "pass"
	Fail         = "fail"
	NotExercised = "not exercised" // the recording holds no call the rule applies to
)

// Failure is one call that broke a rule, and why.
type Failure struct {
	Reason string      `json:"reason"`
	Call   record.Call `json:"call"`
}

// Tolerances of the rules.
const (
	// repeatWindow is how soon an identical request after a Disabled or
	// NotAvailable answer counts as treating the answer as a failure.
	repeatWindow = 2 * time.Second
	// backoffSlack is how much earlier than Retry-After a call may come
	// (the answer's own time on the wire).
	backoffSlack = 100 * time.Millisecond
	// allowedEarlyFetches is how many tokens may be fetched while the
	// previous one had more than half its lifetime left: one, for a till
	// restarted during the session.
	allowedEarlyFetches = 1
)

// Rules are the rules grade applies, in the report's order.
func Rules() []Rule {
	return []Rule{
		{ID: "token-reuse", Title: "The access token is reused until near its expiry", Cite: "docs/api.md#32-token-endpoint", Section: "§3.2",
			Description: "A token is fetched once and sent on every call until it nears its expiry. A token fetched while the previous one still had more than half of its lifetime left (in real time) is early; one early fetch is allowed (a till restarted), more fail.",
			grade:       gradeTokenReuse},
		{ID: "token-renewal", Title: "A new token is fetched before the old one expires", Cite: "docs/api.md#34-access-tokens", Section: "§3.4",
			Description: "No call is sent with a token past its expiry, counted in real time from when it was issued (a till cannot see the sandbox clock move): the client asks for a new token before expires_in runs out, rather than after a 401.",
			grade:       gradeTokenRenewal},
		{ID: "retry-same-id", Title: "A retry carries the same transactionId or Idempotency-Key", Cite: "docs/api.md#14-idempotency-key", Section: "§14",
			Description: "After a POST that got no answer (the client gave up), a 429 or a 5xx, the same request sent again keeps its transactionId (docs/api.md §13.7) and, when it has none, the same Idempotency-Key: otherwise a retried sale is recorded twice.",
			grade:       gradeRetries},
		{ID: "disabled-handled", Title: "Disabled and NotAvailable are handled", Cite: "docs/api.md#15-posstatus", Section: "§1.5",
			Description: "After startInteraction answers posStatus Disabled for a terminal, no sale is sent for it (until an interaction there is Accepted again); an answer Disabled or NotAvailable is not retried at once as if it were an error.",
			grade:       gradeDisabled},
		{ID: "session-linked", Title: "The sale carries the session of its startInteraction", Cite: "docs/api.md#41-startinteraction", Section: "§4.1",
			Description: "Every sale sends the sessionId that the terminal's latest startInteraction answered, never none, one of another terminal, or one already linked to another sale (docs/api.md §13.1).",
			grade:       gradeSessions},
		{ID: "content-types", Title: "Request bodies use the content types the interface accepts", Cite: "docs/api.md#21-content-types-of-request-bodies", Section: "§2.1",
			Description: "A body is sent as JSON (application/json, text/json, application/…+json) or XML (application/xml, text/xml, application/…+xml), charset utf-8 if any; Accept, when sent, admits application/json, text/json or text/plain (docs/api.md §2.5).",
			grade:       gradeContentTypes},
		{ID: "offline-replay-order", Title: "Offline sales are replayed in date order", Cite: "docs/api.md#136-offline-replay", Section: "§13.6",
			Description: "The transactions a till kept offline are replayed oldest first: within a batch, and from one batch to the next, a terminal's transactionDate never goes back.",
			grade:       gradeReplayOrder},
		{ID: "backoff-retry-after", Title: "429 and 503 are answered with a backoff that honours Retry-After", Cite: "docs/api.md#161-rate-limits-per-client", Section: "§16.1",
			Description: "After a 429 (rate limit, docs/api.md §16.1) or a 503 (load shedding, §16.3) with Retry-After, the client's next call waits at least that many seconds.",
			grade:       gradeBackoff},
	}
}

// --- what a call is

// route names the POS route of a call ("startInteraction", "transaction",
// "batch", "receipt", ""), and its POS system.
func route(c record.Call) (name, pos string) {
	seg := strings.Split(strings.Trim(c.Path, "/"), "/")
	if len(seg) > 0 && seg[0] == "v2" {
		seg = seg[1:]
		if len(seg) == 4 && seg[2] == "transactions" && seg[3] == "batch" {
			return "batch", seg[1]
		}
	}
	if len(seg) < 3 || seg[0] != "pos" {
		return "", ""
	}
	switch {
	case len(seg) == 3 && seg[2] == "startInteraction":
		return "startInteraction", seg[1]
	case len(seg) == 3 && seg[2] == "transaction":
		return "transaction", seg[1]
	case len(seg) == 6 && seg[2] == "receipt":
		return "receipt", seg[1]
	}
	return "other", seg[1]
}

func isAPI(c record.Call) bool { return c.Issued == nil }

// fields reads the top-level string fields of a JSON or XML body.
func fields(body string) map[string]any {
	var m map[string]any
	if json.Unmarshal([]byte(body), &m) == nil {
		return m
	}
	m = map[string]any{}
	for _, name := range []string{"sessionId", "transactionId", "terminalId", "posLocationId", "transactionType", "transactionAmount", "originalTransactionId", "transactionDate"} {
		if v, ok := xmlValue(body, name); ok {
			m[name] = v
		}
	}
	return m
}

func xmlValue(body, name string) (string, bool) {
	_, rest, ok := strings.Cut(body, "<"+name+">")
	if !ok {
		return "", false
	}
	v, _, ok := strings.Cut(rest, "</"+name+">")
	return strings.TrimSpace(v), ok
}

func str(m map[string]any, k string) string {
	switch v := m[k].(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return ""
}

// posStatus is the posStatus of an answer: at the top level or in data.
func posStatus(answer string) string {
	var a struct {
		PosStatus string `json:"posStatus"`
		Data      struct {
			PosStatus string `json:"posStatus"`
		} `json:"data"`
	}
	if json.Unmarshal([]byte(answer), &a) != nil {
		return ""
	}
	if a.PosStatus != "" {
		return a.PosStatus
	}
	return a.Data.PosStatus
}

// --- the rules

func gradeTokenReuse(calls []record.Call) (int, []Failure) {
	var fetched []record.Call
	for _, c := range calls {
		if c.Issued != nil {
			fetched = append(fetched, c)
		}
	}
	var early []Failure
	for i := 1; i < len(fetched); i++ {
		prev := fetched[i-1].Issued
		lifetime := prev.ExpiresAt.Sub(prev.IssuedAt)
		if left := prev.RealExpiresAt.Sub(fetched[i].RealAt); left > lifetime/2 {
			early = append(early, Failure{Call: fetched[i],
				Reason: fmt.Sprintf("a new token while the previous one (%s, call %d) had %s of its %s left: reuse it until it nears its expiry",
					prev.Fingerprint, fetched[i-1].Seq, left.Round(time.Second), lifetime)})
		}
	}
	if len(early) <= allowedEarlyFetches {
		early = nil
	}
	return len(fetched), early
}

func gradeTokenRenewal(calls []record.Call) (int, []Failure) {
	checked := 0
	var fails []Failure
	for _, c := range calls {
		if !isAPI(c) || c.Token == nil {
			continue
		}
		checked++
		// Real time: a till counts expires_in on its own clock, and cannot
		// see the sandbox clock move.
		if !c.RealAt.Before(c.Token.RealExpiresAt) {
			fails = append(fails, Failure{Call: c, Reason: fmt.Sprintf("sent with token %s %s after it expired (expires_in ran out at %s): fetch a new token before then",
				c.Token.Fingerprint, c.RealAt.Sub(c.Token.RealExpiresAt).Round(time.Millisecond), c.Token.RealExpiresAt.Format(time.RFC3339))})
		}
	}
	return checked, fails
}

// retryable reports whether a call's outcome asks for a retry: no answer
// (the client gave up), 429, 5xx, or a 409 with Retry-After (its key still
// in flight).
func retryable(c record.Call) bool {
	return c.ClientGone || c.Status == 0 || c.Status == http.StatusTooManyRequests || c.Status >= 500 ||
		(c.Status == http.StatusConflict && c.AnswerHeaders["Retry-After"] != "")
}

// sameRequest reports whether two bodies are one request apart from their
// ids and dates (transactionId, transactionDate): a retry rebuilt from the
// same sale.
func sameRequest(a, b string) bool {
	return normalize(a) == normalize(b)
}

func normalize(body string) string {
	var v any
	if json.Unmarshal([]byte(body), &v) == nil {
		strip(v)
		out, _ := json.Marshal(v)
		return string(out)
	}
	for _, name := range []string{"transactionId", "transactionDate"} {
		for {
			i := strings.Index(body, "<"+name+">")
			j := strings.Index(body, "</"+name+">")
			if i < 0 || j < i {
				break
			}
			body = body[:i] + body[j+len(name)+3:]
		}
	}
	return body
}

func strip(v any) {
	switch v := v.(type) {
	case map[string]any:
		delete(v, "transactionId")
		delete(v, "transactionDate")
		for _, e := range v {
			strip(e)
		}
	case []any:
		for _, e := range v {
			strip(e)
		}
	}
}

// transactionIDs are the transactionIds of a body, in order (a batch's
// items' too).
func transactionIDs(body string) string {
	var v any
	if json.Unmarshal([]byte(body), &v) != nil {
		t, _ := xmlValue(body, "transactionId")
		return t
	}
	var ids []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if s, ok := v["transactionId"].(string); ok {
				ids = append(ids, s)
			}
			if items, ok := v["items"]; ok {
				walk(items)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	return strings.Join(ids, ",")
}

func gradeRetries(calls []record.Call) (int, []Failure) {
	checked := 0
	var fails []Failure
	for i, a := range calls {
		if !isAPI(a) || a.Method != http.MethodPost || !retryable(a) {
			continue
		}
		j := slices.IndexFunc(calls[i+1:], func(b record.Call) bool { return isAPI(b) && b.Method == a.Method && b.Path == a.Path })
		if j < 0 {
			continue
		}
		b := calls[i+1+j]
		if !sameRequest(a.RequestBody, b.RequestBody) {
			continue
		}
		checked++
		txA, txB := transactionIDs(a.RequestBody), transactionIDs(b.RequestBody)
		keyA, keyB := a.RequestHeaders["Idempotency-Key"], b.RequestHeaders["Idempotency-Key"]
		switch {
		case txA != "" && txA != txB:
			fails = append(fails, Failure{Call: b, Reason: fmt.Sprintf("a retry of call %d (answered %s) with another transactionId, %q instead of %q: the sale would be recorded twice",
				a.Seq, outcome(a), txB, txA)})
		case txA == "" && keyA == "":
			fails = append(fails, Failure{Call: b, Reason: fmt.Sprintf("a retry of call %d (answered %s), which had no Idempotency-Key: send each POST with one, and its retries with the same",
				a.Seq, outcome(a))})
		case txA == "" && keyB != keyA:
			fails = append(fails, Failure{Call: b, Reason: fmt.Sprintf("a retry of call %d (answered %s) with another Idempotency-Key, %q instead of %q",
				a.Seq, outcome(a), keyB, keyA)})
		}
	}
	return checked, fails
}

func outcome(c record.Call) string {
	if c.ClientGone || c.Status == 0 {
		return "nothing: the client gave up"
	}
	return strconv.Itoa(c.Status)
}

type place struct{ pos, location, terminal string }

func placeOf(pos string, m map[string]any) place {
	return place{pos, str(m, "posLocationId"), str(m, "terminalId")}
}

func gradeDisabled(calls []record.Call) (int, []Failure) {
	checked := 0
	var fails []Failure
	disabled := map[place]record.Call{}
	for i, c := range calls {
		if !isAPI(c) {
			continue
		}
		name, pos := route(c)
		st := ""
		if c.Status == http.StatusOK {
			st = posStatus(c.AnswerBody)
		}
		switch name {
		case "startInteraction":
			p := placeOf(pos, fields(c.RequestBody))
			switch st {
			case "Disabled":
				disabled[p] = c
			case "Accepted":
				delete(disabled, p)
			}
		case "transaction":
			m := fields(c.RequestBody)
			if d, ok := disabled[placeOf(pos, m)]; ok {
				fails = append(fails, Failure{Call: c, Reason: fmt.Sprintf("a sale for terminal %q at %q after startInteraction answered Disabled there (call %d): a Disabled place takes no sale",
					str(m, "terminalId"), str(m, "posLocationId"), d.Seq)})
			}
		}
		if st != "Disabled" && st != "NotAvailable" {
			continue
		}
		checked++
		if i+1 < len(calls) {
			next := calls[i+1]
			if isAPI(next) && next.Method == c.Method && next.Path == c.Path && next.Query == c.Query && next.RequestBody == c.RequestBody &&
				next.RealAt.Sub(c.RealAt) < repeatWindow {
				fails = append(fails, Failure{Call: next, Reason: fmt.Sprintf("the same request again %s after call %d answered posStatus %s: that is an answer, not an error to retry",
					next.RealAt.Sub(c.RealAt).Round(time.Millisecond), c.Seq, st)})
			}
		}
	}
	return checked, fails
}

func isRefund(m map[string]any) bool {
	if strings.EqualFold(str(m, "transactionType"), "Refund") || str(m, "originalTransactionId") != "" {
		return true
	}
	return strings.HasPrefix(str(m, "transactionAmount"), "-")
}

func gradeSessions(calls []record.Call) (int, []Failure) {
	type session struct {
		p   place
		seq int64
	}
	sessions := map[string]session{} // sessionId → where it was started
	latest := map[place]string{}
	linked := map[string]string{} // sessionId → transactionId
	started := false
	checked := 0
	var fails []Failure
	for _, c := range calls {
		if !isAPI(c) {
			continue
		}
		name, pos := route(c)
		switch name {
		case "startInteraction":
			var a struct {
				Data struct {
					SessionID *string `json:"sessionId"`
				} `json:"data"`
			}
			started = true
			if c.Status == http.StatusOK && json.Unmarshal([]byte(c.AnswerBody), &a) == nil && a.Data.SessionID != nil {
				p := placeOf(pos, fields(c.RequestBody))
				sessions[*a.Data.SessionID] = session{p, c.Seq}
				latest[p] = *a.Data.SessionID
			}
			continue
		case "transaction":
		default:
			continue
		}
		m := fields(c.RequestBody)
		if isRefund(m) {
			continue
		}
		checked++
		p := placeOf(pos, m)
		id, tx := str(m, "sessionId"), str(m, "transactionId")
		s, known := sessions[id]
		fail := func(format string, args ...any) {
			fails = append(fails, Failure{Call: c, Reason: fmt.Sprintf(format, args...)})
		}
		switch {
		case id == "":
			fail("a sale without a sessionId: send the one startInteraction answered for this visit")
		case !known && (started || c.Status == http.StatusNotFound):
			fail("a sale with session %q, which no startInteraction of this client answered", id)
		case !known:
			// Started before the recording: nothing to compare it with.
		case s.p != p:
			fail("a sale at terminal %q of %q with the session started at terminal %q of %q (call %d)", p.terminal, p.location, s.p.terminal, s.p.location, s.seq)
		case linked[id] != "" && linked[id] != tx:
			fail("a sale with session %q, already linked to transaction %q: each visit starts its own interaction", id, linked[id])
		case latest[p] != id:
			fail("a sale with session %q (call %d), not the one of the terminal's latest startInteraction (%q)", id, s.seq, latest[p])
		}
		if known && linked[id] == "" && c.Status == http.StatusOK {
			linked[id] = tx
		}
	}
	return checked, fails
}

// answerTypes are the types the interface answers in (docs/api.md §2.5).
var answerTypes = []string{"application/json", "text/json", "text/plain", "*/*", "application/*", "text/*"}

func gradeContentTypes(calls []record.Call) (int, []Failure) {
	checked := 0
	var fails []Failure
	for _, c := range calls {
		if !isAPI(c) {
			continue
		}
		checked++
		ct, hasBody := c.RequestHeaders["Content-Type"], c.RequestBody != "" || c.Method == http.MethodPost
		switch {
		case hasBody && ct == "":
			fails = append(fails, Failure{Call: c, Reason: "a body without a Content-Type: send application/json (or XML, docs/api.md §2.1)"})
			continue
		case hasBody && codec.KindOf(ct) == codec.Unsupported:
			fails = append(fails, Failure{Call: c, Reason: fmt.Sprintf("Content-Type %q is not one the interface accepts: send application/json or application/xml (charset utf-8)", ct)})
			continue
		case c.Status == http.StatusUnsupportedMediaType:
			fails = append(fails, Failure{Call: c, Reason: "answered 415: the body's content type was refused"})
			continue
		}
		if accept := c.RequestHeaders["Accept"]; accept != "" && !acceptsAnswer(accept) {
			fails = append(fails, Failure{Call: c, Reason: fmt.Sprintf("Accept %q admits none of the types the interface answers (application/json, text/json, text/plain)", accept)})
		}
	}
	return checked, fails
}

func acceptsAnswer(accept string) bool {
	for _, r := range strings.Split(accept, ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(r))
		if err == nil && slices.Contains(answerTypes, strings.ToLower(mt)) {
			return true
		}
	}
	return false
}

// parseDate reads a transactionDate as docs/api.md §2.4 does.
func parseDate(s string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

func gradeReplayOrder(calls []record.Call) (int, []Failure) {
	latest := map[place]replayed{} // the newest sale replayed per terminal
	checked := 0
	var fails []Failure
	for _, c := range calls {
		name, pos := route(c)
		if !isAPI(c) || name != "batch" {
			continue
		}
		var b struct {
			Items []map[string]any `json:"items"`
		}
		if json.Unmarshal([]byte(c.RequestBody), &b) != nil {
			continue // not JSON, or more than the recording keeps
		}
		checked++
		newest, reasons := replayOrder(pos, b.Items, latest)
		if len(reasons) > 0 {
			fails = append(fails, Failure{Call: c, Reason: "replayed out of date order: " + strings.Join(reasons, "; ")})
		}
		if c.Status == http.StatusOK {
			for p, t := range newest {
				if t.After(latest[p].at) {
					latest[p] = replayed{t, c.Seq}
				}
			}
		}
	}
	return checked, fails
}

// replayed is the newest transactionDate of a terminal replayed so far, and
// the call that replayed it.
type replayed struct {
	at  time.Time
	seq int64
}

// replayOrder checks a batch's items against each other and against what
// was replayed before; it answers each terminal's newest date in the batch.
func replayOrder(pos string, items []map[string]any, latest map[place]replayed) (map[place]time.Time, []string) {
	newest := map[place]time.Time{}
	var reasons []string
	for k, it := range items {
		t, ok := parseDate(str(it, "transactionDate"))
		if !ok {
			continue
		}
		p := placeOf(pos, it)
		if prev, ok := newest[p]; ok && t.Before(prev) {
			reasons = append(reasons, fmt.Sprintf("item %d (%s, %s) comes after one dated %s", k+1, str(it, "transactionId"), t.Format(time.RFC3339), prev.Format(time.RFC3339)))
		} else if l, ok := latest[p]; ok && t.Before(l.at) {
			reasons = append(reasons, fmt.Sprintf("item %d (%s, %s) is older than a sale of terminal %q replayed before it (call %d, %s)",
				k+1, str(it, "transactionId"), t.Format(time.RFC3339), p.terminal, l.seq, l.at.Format(time.RFC3339)))
		}
		if t.After(newest[p]) {
			newest[p] = t
		}
	}
	return newest, reasons
}

func gradeBackoff(calls []record.Call) (int, []Failure) {
	checked := 0
	var fails []Failure
	for i, c := range calls {
		if c.Status != http.StatusTooManyRequests && c.Status != http.StatusServiceUnavailable {
			continue
		}
		secs, err := strconv.Atoi(c.AnswerHeaders["Retry-After"])
		if err != nil {
			continue
		}
		j := slices.IndexFunc(calls[i+1:], isAPI)
		if j < 0 {
			continue
		}
		next := calls[i+1+j]
		checked++
		answered := c.RealAt.Add(time.Duration(c.DurationMs * float64(time.Millisecond)))
		wait := time.Duration(secs) * time.Second
		if waited := next.RealAt.Sub(answered); waited < wait-backoffSlack {
			fails = append(fails, Failure{Call: next, Reason: fmt.Sprintf("sent %s after call %d answered %d with Retry-After: %d: wait at least %s",
				waited.Round(time.Millisecond), c.Seq, c.Status, secs, wait)})
		}
	}
	return checked, fails
}
