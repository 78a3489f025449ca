package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/posgate/posgate/client"
	"github.com/posgate/posgate/internal/conformance/grade"
	"github.com/posgate/posgate/internal/conformance/record"
	"github.com/posgate/posgate/internal/conformance/suite"
)

// The conformance kit (docs/guides/conformance.md): grade what a demo
// server recorded of a till's calls, and run the black-box suite of the
// interface against any server.

// errNoRecordings is the answer of a server that records no calls.
func errNoRecordings(err error) error {
	if errors.Is(err, client.ErrNotFound) {
		return fmt.Errorf("this server records no calls: only a demo server (posgate serve --demo) does")
	}
	return err
}

// cmdConformanceGrade grades a client's recorded calls against the
// interface's rules (docs/api.md §20.3); it fails when a rule fails.
func cmdConformanceGrade(ctx context.Context, env *cli, args []string) error {
	fs := env.newFlags("conformance grade")
	sf := addServerFlags(fs)
	htmlPath := fs.String("html", "", "write the report for people to this HTML file")
	jsonPath := fs.String("json", "", "write the report for programs to this JSON file")
	pos, err := env.parseArgs(fs, "conformance grade", args, 1)
	if err != nil {
		return err
	}
	r, err := env.connect(sf)
	if err != nil {
		return err
	}
	rec, err := r.client.Admin.GetRecording(ctx, pos[0])
	if err != nil {
		return r.wrap(errNoRecordings(err))
	}
	report := grade.Grade(conv[record.Recording](rec), r.server, time.Now())
	for _, out := range []struct {
		path  *string
		write func(io.Writer) error
	}{{htmlPath, report.WriteHTML}, {jsonPath, report.WriteJSON}} {
		if *out.path != "" {
			if err := writeReport(*out.path, out.write); err != nil {
				return err
			}
		}
	}
	if err := env.emit(report, func(w io.Writer) { printGrade(w, report) }); err != nil {
		return err
	}
	if !report.Passed {
		return fmt.Errorf("%d of %d rules failed: %s", len(report.Failed), len(report.Rules), strings.Join(report.Failed, ", "))
	}
	return nil
}

func writeReport(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}

func printGrade(w io.Writer, r grade.Report) {
	fmt.Fprintf(w, "client %s on %s: %d calls recorded", r.ClientID, r.Server, r.Calls)
	if r.Dropped > 0 {
		fmt.Fprintf(w, " (%d older ones no longer kept)", r.Dropped)
	}
	fmt.Fprintln(w)
	for _, res := range r.Rules {
		mark := map[string]string{grade.Pass: "PASS", grade.Fail: "FAIL", grade.NotExercised: "-   "}[res.Status]
		fmt.Fprintf(w, "%s  %-21s %s (docs/api.md %s)", mark, res.ID, res.Title, res.Section)
		if res.Status == grade.NotExercised {
			fmt.Fprint(w, ": not exercised")
		}
		fmt.Fprintln(w)
		for _, f := range res.Failures {
			c := f.Call
			target := c.Path
			if c.Query != "" {
				target += "?" + c.Query
			}
			fmt.Fprintf(w, "      call %d %s %s → %d: %s\n", c.Seq, c.Method, target, c.Status, f.Reason)
		}
	}
}

// cmdConformanceForget drops what a demo server recorded of a client, so
// that the till's next session is graded on its own.
func cmdConformanceForget(ctx context.Context, env *cli, args []string) error {
	return operatorCommand(ctx, env, "conformance forget", args, 1, nil, func(a *client.Admin, pos []string) error {
		rec, err := a.ForgetRecording(ctx, pos[0])
		if err != nil {
			return errNoRecordings(err)
		}
		return env.say(rec, "forgot the recorded calls of client %s: its next calls are recorded afresh\n", rec.ClientID)
	})
}

// cmdConformanceRun runs the black-box suite of the interface against a
// server; it fails when a check fails.
func cmdConformanceRun(ctx context.Context, env *cli, args []string) error {
	fs := env.newFlags("conformance run")
	var cfg suite.Config
	fs.StringVar(&cfg.BaseURL, "base-url", "", "the server's {base_url} (required)")
	fs.StringVar(&cfg.AuthURL, "auth-url", "", "its identity provider's {auth_url} (default --base-url)")
	fs.StringVar(&cfg.ClientID, "client-id", "", "a POS client's id, of scope pos_integration (required)")
	fs.StringVar(&cfg.ClientSecret, "client-secret", "", "its secret (required)")
	fs.StringVar(&cfg.POSSystem, "pos", "clover", "the client's POS system")
	fs.StringVar(&cfg.Company, "company", "demo-company", "a company of it, for the promotion import (an empty list is sent)")
	fs.StringVar(&cfg.Location, "location", "LOC123", "an active location of that company")
	fs.StringVar(&cfg.Terminal, "terminal", "TERM-05", "an active terminal registered at that location")
	fs.StringVar(&cfg.Email, "email", "john.doe@example.com", "an e-mail address the coupon search looks for")
	if _, err := env.parseArgs(fs, "conformance run", args, 0); err != nil {
		return err
	}
	var err error
	if cfg.BaseURL, err = serverURL("--base-url", cfg.BaseURL); err != nil {
		return err
	}
	if cfg.AuthURL != "" {
		if cfg.AuthURL, err = serverURL("--auth-url", cfg.AuthURL); err != nil {
			return err
		}
	}
	res := suite.Run(ctx, cfg)
	if err := env.emit(res, func(w io.Writer) { printRun(w, res) }); err != nil {
		return err
	}
	if !res.Passed {
		return fmt.Errorf("%d of %d checks failed: %s", len(res.Failed), len(res.Checks), strings.Join(res.Failed, ", "))
	}
	return nil
}

func printRun(w io.Writer, r suite.Result) {
	for _, c := range r.Checks {
		mark := "PASS"
		if !c.Passed {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "%s  %-34s %s (docs/api.md %s)\n", mark, c.ID, c.Title, c.Section)
		if c.Passed {
			continue
		}
		fmt.Fprintf(w, "      %s\n", c.Problem)
		if ex := c.Exchange; ex != nil {
			fmt.Fprintf(w, "      > %s %s\n", ex.Method, ex.URL)
			printHeaders(w, "      > ", ex.RequestHeaders)
			if ex.RequestBody != "" {
				fmt.Fprintf(w, "      > %s\n", ex.RequestBody)
			}
			if ex.Error != "" {
				fmt.Fprintf(w, "      < no answer: %s\n", ex.Error)
				continue
			}
			fmt.Fprintf(w, "      < %d\n", ex.Status)
			printHeaders(w, "      < ", ex.AnswerHeaders)
			if ex.AnswerBody != "" {
				fmt.Fprintf(w, "      < %s\n", strings.ReplaceAll(ex.AnswerBody, "\n", "\n      < "))
			}
		}
	}
	fmt.Fprintf(w, "%d checks: %d passed, %d failed\n", len(r.Checks), len(r.Checks)-len(r.Failed), len(r.Failed))
}

func printHeaders(w io.Writer, prefix string, h map[string]string) {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "%s%s: %s\n", prefix, k, h[k])
	}
}
