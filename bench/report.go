package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// coldStartTarget is the bar for cold start to /readyz on SQLite.
const coldStartTarget = 300 * time.Millisecond

// rssTargetKB is the bar for posgate's resident memory under load.
const rssTargetKB = 64 << 10

// machine describes where the run happened.
type machine struct {
	NProc                  int
	CPU, Memory, Kernel    string
	Go, Wrk, LoadAvgBefore string
}

func describeMachine(ctx context.Context) machine {
	m := machine{NProc: runtime.NumCPU(), Go: runtime.Version()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				m.Memory = fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = "Linux " + strings.TrimSpace(string(b))
	}
	if out, err := exec.CommandContext(ctx, "wrk", "-v").CombinedOutput(); len(out) > 0 {
		_ = err // wrk -v exits 1 after printing its version
		first, _, _ := strings.Cut(string(out), "\n")
		if f := strings.Fields(first); len(f) >= 2 {
			m.Wrk = "wrk " + f[1]
		}
	}
	m.LoadAvgBefore = loadAvg()
	return m
}

// loadAvg is the 1, 5 and 15 minute load average.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func (m machine) summary() string {
	return fmt.Sprintf("%d CPUs (%s), %s, %s, %s, %s; load average %s", m.NProc, m.CPU, m.Memory, m.Kernel, m.Go, m.Wrk, m.LoadAvgBefore)
}

// startRow is the cold start of one store.
type startRow struct {
	Store         string
	Fresh, Loaded time.Duration
}

// report collects a run's rows.
type report struct {
	Machine      machine
	Options      *options
	Started      time.Time
	LoadAvgAfter string
	Baselines    []*result // before and after the stores
	// ExtraBaselines were measured at the other connection counts of the
	// rows (not used for ratios).
	ExtraBaselines []*result
	BaselineRPS    float64
	Rows           []*result
	Starts         []*startRow
	// PostgresSettings names the server and its durability settings.
	PostgresSettings string
}

// bestBaselineP99 is the lowest p99 of the baselines measured with conns
// connections, 0 if none was.
func (rep *report) bestBaselineP99(conns int) time.Duration {
	var best time.Duration
	for _, b := range append(slices.Clone(rep.Baselines), rep.ExtraBaselines...) {
		if b.Err == nil && b.Connections == conns && (best == 0 || b.P99 < best) {
			best = b.P99
		}
	}
	return best
}

// baselineP99 is the mean p99 of the baselines measured with conns
// connections (before and after the stores, like the rate the ratios
// use), 0 if none was.
func (rep *report) baselineP99(conns int) time.Duration {
	var sum time.Duration
	n := 0
	for _, b := range append(slices.Clone(rep.Baselines), rep.ExtraBaselines...) {
		if b.Err == nil && b.Connections == conns {
			sum += b.P99
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / time.Duration(n)
}

// finish computes the ratios and checks every target.
func (rep *report) finish() {
	rep.LoadAvgAfter = loadAvg()
	for _, b := range rep.Baselines {
		rep.BaselineRPS += b.RPS / float64(len(rep.Baselines))
	}
	for _, r := range rep.Rows {
		if r.Err != nil {
			continue
		}
		if rep.BaselineRPS > 0 && r.Unit == "" {
			r.Ratio = r.RPS / rep.BaselineRPS
		}
		t := r.target
		if t.minRPS > 0 && r.RPS < t.minRPS {
			r.Failed = append(r.Failed, fmt.Sprintf("%.0f req/s < %.0f", r.RPS, t.minRPS))
		}
		if t.minRatio > 0 && r.Ratio < t.minRatio {
			// Three decimals where two would print a miss as equal to its bar.
			prec := 2
			if fmt.Sprintf("%.2f", r.Ratio) == fmt.Sprintf("%.2f", t.minRatio) {
				prec = 3
			}
			r.Failed = append(r.Failed, fmt.Sprintf("%.*f× baseline < %.2f×", prec, r.Ratio, t.minRatio))
		}
		if t.maxP99 > 0 && r.P99 > t.maxP99 {
			msg := fmt.Sprintf("p99 %s > %s", fmtDur(r.P99), fmtDur(t.maxP99))
			if b := rep.bestBaselineP99(r.Connections); b > t.maxP99 {
				// The machine's own ceiling: a server that does nothing
				// missed the same bound under the same load.
				msg += fmt.Sprintf(" (the bare net/http baseline's own p99 at %d connections in this run: %s)", r.Connections, fmtDur(b))
			}
			r.Failed = append(r.Failed, msg)
		}
		if b := rep.baselineP99(r.Connections); t.maxP99Baseline > 0 && b > 0 {
			if bound := time.Duration(t.maxP99Baseline * float64(b)); r.P99 > bound {
				r.Failed = append(r.Failed, fmt.Sprintf("p99 %s > %g × the baseline's %s = %s", fmtDur(r.P99), t.maxP99Baseline, fmtDur(b), fmtDur(bound)))
			}
		}
		rep.checkFloor(r)
		if t.zeroErrors && r.errors() > 0 {
			r.Failed = append(r.Failed, fmt.Sprintf("%d errors", r.errors()))
		}
		if t.maxDuration > 0 && r.Duration > t.maxDuration {
			r.Failed = append(r.Failed, fmt.Sprintf("took %s > %s", fmtDur(r.Duration), fmtDur(t.maxDuration)))
		}
		if r.PeakRSSKB > t.rssKB() && !t.anyRSS {
			r.Failed = append(r.Failed, fmt.Sprintf("peak RSS %.1f MB > %d MB", float64(r.PeakRSSKB)/1024, t.rssKB()>>10))
		}
	}
}

// failures counts the rows that missed a target, failed a check or could
// not be measured.
func (rep *report) failures() int {
	n := 0
	for _, r := range rep.Rows {
		if r.Err != nil || len(r.Failed) > 0 {
			n++
		}
	}
	for _, s := range rep.Starts {
		if s.Store == "sqlite" && max(s.Fresh, s.Loaded) > coldStartTarget {
			n++
		}
	}
	return n
}

// rssKB is the row's RSS bar.
func (t target) rssKB() int64 { return cmp.Or(t.maxRSSKB, rssTargetKB) }

// describe renders a target for the table.
func (t target) describe() string {
	var parts []string
	if t.minRPS > 0 {
		parts = append(parts, fmt.Sprintf("≥ %.0f/s", t.minRPS))
	}
	if t.minRatio > 0 {
		parts = append(parts, fmt.Sprintf("≥ %.2g×", t.minRatio))
	}
	if t.maxP99 > 0 {
		parts = append(parts, "p99 ≤ "+fmtDur(t.maxP99))
	}
	if t.maxP99Baseline > 0 {
		parts = append(parts, fmt.Sprintf("p99 ≤ %g× baseline's", t.maxP99Baseline))
	}
	if t.zeroErrors {
		parts = append(parts, "0 errors")
	}
	if t.maxDuration > 0 {
		parts = append(parts, "≤ "+fmtDur(t.maxDuration))
	}
	if t.maxShedP99Baseline > 0 {
		parts = append(parts, fmt.Sprintf("503s' p99 ≤ %g× baseline's", t.maxShedP99Baseline))
	}
	if t.minFloorRatio > 0 {
		parts = append(parts, fmt.Sprintf("≥ %.2g× floor", t.minFloorRatio))
	}
	if t.maxFloorCPU > 0 {
		parts = append(parts, fmt.Sprintf("CPU ≤ %g× floor's", t.maxFloorCPU))
	}
	if t.maxOwnCPU > 0 {
		parts = append(parts, "posgate's CPU outside the database ≤ "+fmtDur(t.maxOwnCPU))
	}
	if t.minRowRatio > 0 {
		parts = append(parts, fmt.Sprintf("≥ %.2g× %s", t.minRowRatio, t.ofRow))
	}
	if !t.anyRSS {
		parts = append(parts, fmt.Sprintf("RSS ≤ %d MB", t.rssKB()>>10))
	}
	return strings.Join(parts, ", ")
}

// fmtDur prints a latency with three significant digits.
func fmtDur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	case d >= 10*time.Millisecond:
		return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
	}
}

// markdown renders the run: what, where, how, then the tables.
func (rep *report) markdown() string {
	var b strings.Builder
	o, m := rep.Options, rep.Machine
	fmt.Fprintf(&b, "Run of %s UTC with `%s`.\n\n", rep.Started.Format("2006-01-02 15:04"), o.commandLine)
	fmt.Fprintf(&b, "- Machine: %d CPUs (`nproc`), %s, %s memory, %s; %s, %s.\n", m.NProc, m.CPU, m.Memory, m.Kernel, m.Go, m.Wrk)
	fmt.Fprintf(&b, "- Load average before / after the run: %s / %s (the machine is shared: compare ratios, not absolute numbers).\n",
		m.LoadAvgBefore, rep.LoadAvgAfter)
	fmt.Fprintf(&b, "- Load: wrk on loopback, %d threads, %d connections (unless the row says otherwise), %s per row after %s of unmeasured warm-up; keys drawn at random per request; data sets of %d rows.\n",
		o.load.Threads, o.load.Connections, o.load.Duration, o.warmup, o.rows)
	bl := make([]string, len(rep.Baselines))
	for i, r := range rep.Baselines {
		bl[i] = fmt.Sprintf("%.0f", r.RPS)
	}
	fmt.Fprintf(&b, "- Baseline (bare net/http JSON hello-world, same settings) before / after the stores: %s req/s; ratios use their mean, %.0f req/s.\n",
		strings.Join(bl, " / "), rep.BaselineRPS)
	if rep.PostgresSettings != "" {
		fmt.Fprintf(&b, "- %s. For PostgreSQL rows, CPU/req counts posgate only, not the database server.\n", rep.PostgresSettings)
	}
	if o.serverCPUs != "" {
		pg := ""
		if o.pinnedPostgres != "" {
			pg = "; " + o.pinnedPostgres
		}
		fmt.Fprintf(&b, "- Pinned (-pin): posgate and the baseline on CPUs %s, wrk and the bench on CPUs %s%s. Each side has half the machine: compare ratios, not rates, with an unpinned run.\n",
			o.serverCPUs, o.loadCPUs, pg)
	}
	if len(o.serveArgs) > 0 {
		fmt.Fprintf(&b, "- posgate serve ran with `%s`.\n", strings.Join(o.serveArgs, " "))
	}
	if o.profile {
		fmt.Fprintf(&b, "- Profiled run (CPU and allocation profiles in %s): figures are a little lower than without profiling.\n", o.outDir)
	}
	b.WriteString("- CPU/req is the server process's CPU time (user + system) per answered request: the figure that depends least on the rest of the machine.\n")
	b.WriteString("- \"In posgate's handlers\" is posgate's own histogram of the row's requests (`--metrics-listen`, buckets 0.5, 1, 2.5, 5, 10, 25 ms, …): the time from a request's arrival at its handler to the answer, without reading the request, writing a small answer, or waiting for a CPU. wrk's p99 minus it is time spent outside posgate's code.\n")
	b.WriteString("- Floor: each row's floor measured right after it in the same run (bench/floors.go, bench/salefloor.go; docs/performance.md says how each is built); × floor is the row's rate over its floor's. DB CPU/req is the PostgreSQL server's CPU per request (its processes' /proc times; on SQLite the engine runs inside posgate and its CPU is in CPU/req).\n")
	b.WriteString("\n| endpoint | store | conns | req/s | × floor | floor req/s | × baseline | p99 | floor p99 | errors | CPU/req | DB CPU/req | floor CPU/req + DB | peak RSS | target | met | notes |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|\n")
	for _, r := range rep.Baselines[:1] {
		fmt.Fprintf(&b, "| %s | %s | %d | %.0f | | | 1.00 | %s | | %d | %s | | | | | | |\n", r.Scenario, r.Store, r.Connections, r.RPS, fmtDur(r.P99), r.errors(), fmtDur(r.CPUPerReq))
	}
	for _, r := range rep.ExtraBaselines {
		note := fmt.Sprintf("the floor of the %d-connection rows' latency", r.Connections)
		if r.Note != "" {
			note += "; " + r.Note
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %.0f | | | - | %s | | %d | %s | | | | | | %s |\n",
			r.Scenario, r.Store, r.Connections, r.RPS, fmtDur(r.P99), r.errors(), fmtDur(r.CPUPerReq), cell(note))
	}
	for _, r := range rep.Rows {
		if r.Err != nil {
			fmt.Fprintf(&b, "| %s | %s | | | | | | | | | | | | | %s | ❌ | not measured: %s |\n", r.Scenario, r.Store, r.target.describe(), cell(r.Err.Error()))
			continue
		}
		met := "✅"
		notes := r.Note
		if r.Handler != "" {
			notes = strings.TrimPrefix(notes+"; "+r.Handler, "; ")
		}
		if r.Writers != "" {
			notes = strings.TrimPrefix(notes+"; "+r.Writers, "; ")
		}
		if r.Floor != nil {
			notes = strings.TrimPrefix(notes+"; floor: "+r.Floor.What, "; ")
		}
		if r.FloorErr != nil {
			notes = strings.TrimPrefix(notes+"; floor not measured: "+r.FloorErr.Error(), "; ")
		}
		if len(r.Failed) > 0 {
			met = "❌"
			notes = strings.TrimPrefix(notes+"; missed: "+strings.Join(r.Failed, "; "), "; ")
		}
		rate, ratio := fmt.Sprintf("%.0f", r.RPS), fmt.Sprintf("%.2f", r.Ratio)
		if r.Unit != "" {
			rate, ratio = fmt.Sprintf("%.0f %s", r.RPS, r.Unit), "-"
		}
		floorRate, floorRatio, floorP99, floorCPU := "", "", "", ""
		if f := r.Floor; f != nil {
			floorRate, floorRatio, floorP99 = fmt.Sprintf("%.0f", f.RPS), fmt.Sprintf("%.2f", r.FloorRatio), fmtDur(f.P99)
			floorCPU = fmtDur(f.CPU)
			if f.DBCPU > 0 {
				floorCPU += " + " + fmtDur(f.DBCPU)
			}
		}
		dbCPU := ""
		if r.DBCPUPerReq > 0 {
			dbCPU = fmtDur(r.DBCPUPerReq)
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s | %s | %s | %s | %d | %s | %s | %s | %d MB | %s | %s | %s |\n", r.Scenario, r.Store, r.Connections,
			rate, floorRatio, floorRate, ratio, fmtDur(r.P99), floorP99, r.errors(), fmtDur(r.CPUPerReq), dbCPU, floorCPU, r.PeakRSSKB>>10,
			r.target.describe(), met, cell(notes))
	}
	b.WriteString("\n| cold start to /readyz | new database | loaded database | target | met |\n|---|---:|---:|---|---|\n")
	for _, s := range rep.Starts {
		target, met := "", ""
		if s.Store == "sqlite" {
			target, met = "≤ "+fmtDur(coldStartTarget), "✅"
			if max(s.Fresh, s.Loaded) > coldStartTarget {
				met = "❌"
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", s.Store, fmtDur(s.Fresh), fmtDur(s.Loaded), target, met)
	}
	return b.String()
}

// cell makes text safe inside a markdown table cell.
func cell(s string) string {
	return strings.NewReplacer("|", "\\|", "\n", " ").Replace(s)
}

// Markers around the generated part of docs/performance.md; the rest of the
// file (notes on optimisations, profiles) is kept as written.
const (
	docBegin = "<!-- bench:begin (written by go run ./bench; edit outside these markers) -->"
	docEnd   = "<!-- bench:end -->"
)

// writeDoc puts md between the markers of path, creating the file (with a
// title) when it does not exist.
func writeDoc(path, md string) error {
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	text := string(old)
	block := docBegin + "\n" + md + docEnd
	i, j := strings.Index(text, docBegin), strings.Index(text, docEnd)
	switch {
	case i >= 0 && j > i:
		text = text[:i] + block + text[j+len(docEnd):]
	case text == "":
		text = "# Performance\n\n" + block + "\n"
	default:
		text = strings.TrimRight(text, "\n") + "\n\n" + block + "\n"
	}
	return os.WriteFile(path, []byte(text), 0o644)
}
