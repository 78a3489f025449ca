package grade

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"html/template"
	"io"
	"time"

	"github.com/posgate/posgate/internal/conformance/record"
)

// Result is a rule's outcome in a report.
type Result struct {
	Rule
	Status   string    `json:"status"`
	Checked  int       `json:"checked"`
	Failures []Failure `json:"failures"`
}

// Report is the grading of one client's recording.
type Report struct {
	ClientID string    `json:"clientId"`
	Server   string    `json:"server"`
	GradedAt time.Time `json:"gradedAt"`
	Calls    int       `json:"calls"`
	// Dropped is how many older calls the server no longer kept: the
	// rules saw only the calls it kept.
	Dropped int64    `json:"dropped"`
	Passed  bool     `json:"passed"`
	Failed  []string `json:"failed"`
	Rules   []Result `json:"rules"`
}

// Grade grades rec against every rule. server names where it was recorded;
// at is when it is graded.
func Grade(rec record.Recording, server string, at time.Time) Report {
	r := Report{ClientID: rec.ClientID, Server: server, GradedAt: at.UTC(), Calls: len(rec.Calls), Dropped: rec.Dropped,
		Passed: true, Failed: []string{}, Rules: []Result{}}
	for _, rule := range Rules() {
		checked, fails := rule.grade(rec.Calls)
		res := Result{Rule: rule, Status: Pass, Checked: checked, Failures: fails}
		switch {
		case len(fails) > 0:
			res.Status = Fail
			r.Passed = false
			r.Failed = append(r.Failed, rule.ID)
		case checked == 0:
			res.Status = NotExercised
		}
		if res.Failures == nil {
			res.Failures = []Failure{}
		}
		r.Rules = append(r.Rules, res)
	}
	return r
}

// WriteJSON writes the report as indented JSON.
func (r Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

//go:embed report.html
var reportHTML string

var reportTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"pretty": pretty,
	"stamp":  func(t time.Time) string { return t.Format("2006-01-02T15:04:05.000Z07:00") },
}).Parse(reportHTML))

// WriteHTML writes the report as a page for people: each rule with its
// status and, for a failed one, its failing calls, request and answer.
func (r Report) WriteHTML(w io.Writer) error {
	return reportTemplate.Execute(w, r)
}

// pretty indents a JSON body; anything else is answered as it is.
func pretty(body string) string {
	var out bytes.Buffer
	if json.Indent(&out, []byte(body), "", "  ") == nil {
		return out.String()
	}
	return body
}
