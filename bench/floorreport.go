package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// checkFloor computes r's ratio to its floor and checks the targets that
// rest on floors and other rows, each miss with its measured reason.
func (rep *report) checkFloor(r *result) {
	t, f := r.target, r.Floor
	if f != nil && f.RPS > 0 {
		r.FloorRatio = r.RPS / f.RPS
	}
	if (t.minFloorRatio > 0 || t.maxFloorCPU > 0 || t.maxOwnCPU > 0) && f == nil {
		msg := "no floor measured"
		if r.FloorErr != nil {
			msg += ": " + r.FloorErr.Error()
		}
		r.Failed = append(r.Failed, msg)
		return
	}
	cpu := fmt.Sprintf("CPU per request: posgate %s + database %s, the floor %s + database %s",
		fmtDur(r.CPUPerReq), fmtDur(r.DBCPUPerReq), fmtDur(f0(f).CPU), fmtDur(f0(f).DBCPU))
	if t.minFloorRatio > 0 && r.FloorRatio < t.minFloorRatio {
		r.Failed = append(r.Failed, fmt.Sprintf("%.2f× floor < %.2f× (%.0f against %.0f/s; %s)", r.FloorRatio, t.minFloorRatio, r.RPS, f.RPS, cpu))
	}
	if t.maxFloorCPU > 0 {
		own, floor := r.CPUPerReq+r.DBCPUPerReq, f.CPU+f.DBCPU
		if float64(own) > t.maxFloorCPU*float64(floor) {
			r.Failed = append(r.Failed, fmt.Sprintf("CPU %s > %g × the floor's %s (%s)", fmtDur(own), t.maxFloorCPU, fmtDur(floor), cpu))
		}
	}
	if t.maxOwnCPU > 0 {
		if own := r.ownCPU(); own > t.maxOwnCPU {
			r.Failed = append(r.Failed, fmt.Sprintf("posgate's own CPU %s > %s (%s)", fmtDur(own), fmtDur(t.maxOwnCPU), cpu))
		}
	}
	if t.minRowRatio > 0 {
		var of *result
		for _, o := range rep.Rows {
			if o.Store == r.Store && o.Scenario == t.ofRow && o.Err == nil {
				of = o
			}
		}
		switch {
		case of == nil || of.RPS == 0:
			r.Failed = append(r.Failed, fmt.Sprintf("row %s not measured", t.ofRow))
		case r.RPS < t.minRowRatio*of.RPS:
			r.Failed = append(r.Failed, fmt.Sprintf("%.2f× %s < %.2f× (%.0f against %.0f/s; CPU per request %s against %s)", r.RPS/of.RPS, t.ofRow,
				t.minRowRatio, r.RPS, of.RPS, fmtDur(r.CPUPerReq), fmtDur(of.CPUPerReq)))
		}
	}
	if b := rep.baselineShedP99(r.Connections); t.maxShedP99Baseline > 0 && b > 0 {
		if bound := time.Duration(t.maxShedP99Baseline * float64(b)); r.ShedP99 > bound {
			r.Failed = append(r.Failed, fmt.Sprintf("503s' p99 %s > %g × the baseline's %s", fmtDur(r.ShedP99), t.maxShedP99Baseline, fmtDur(b)))
		}
	}
}

// f0 is f, or a zero floor.
func f0(f *floorResult) *floorResult {
	if f == nil {
		return &floorResult{}
	}
	return f
}

// ownCPU is posgate's CPU per request outside the database: on
// PostgreSQL its process's; on SQLite, whose engine runs inside posgate,
// its process's minus the floor program's (which is mostly the engine's).
func (r *result) ownCPU() time.Duration {
	if r.Store == "sqlite" && r.Floor != nil {
		return max(0, r.CPUPerReq-r.Floor.CPU)
	}
	return r.CPUPerReq
}

// baselineShedP99 is the mean p99 of the baselines' answers at conns
// connections, the bar of the overload row's 503s.
func (rep *report) baselineShedP99(conns int) time.Duration {
	var sum time.Duration
	n := 0
	for _, b := range rep.ExtraBaselines {
		if b.Err == nil && b.Connections == conns && b.ShedP99 > 0 {
			sum += b.ShedP99
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / time.Duration(n)
}

// jsonRow is a row of -json's array.
type jsonRow struct {
	Row                        string   `json:"row"`
	Store                      string   `json:"store"`
	Connections                int      `json:"connections"`
	RPS                        float64  `json:"rps"`
	Unit                       string   `json:"unit,omitempty"`
	P99Millis                  float64  `json:"p99Millis"`
	Errors                     int64    `json:"errors"`
	CPUMicrosPerRequest        float64  `json:"cpuMicrosPerRequest"`
	DBCPUMicrosPerRequest      float64  `json:"dbCpuMicrosPerRequest"`
	OwnCPUMicrosPerRequest     float64  `json:"ownCpuMicrosPerRequest"`
	FloorRPS                   float64  `json:"floorRps"`
	FloorP99Millis             float64  `json:"floorP99Millis"`
	FloorCPUMicrosPerRequest   float64  `json:"floorCpuMicrosPerRequest"`
	FloorDBCPUMicrosPerRequest float64  `json:"floorDbCpuMicrosPerRequest"`
	Floor                      string   `json:"floor,omitempty"`
	RatioToFloor               float64  `json:"ratioToFloor"`
	RatioToBaseline            float64  `json:"ratioToBaseline"`
	PeakRSSMB                  int64    `json:"peakRssMB"`
	Met                        bool     `json:"met"`
	Missed                     []string `json:"missed,omitempty"`
	Error                      string   `json:"error,omitempty"`
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// writeJSON writes the rows as a JSON array to path.
func (rep *report) writeJSON(path string) error {
	rows := []jsonRow{}
	for _, r := range rep.Rows {
		j := jsonRow{Row: r.Scenario, Store: r.Store, Connections: r.Connections, RPS: r.RPS, Unit: r.Unit, P99Millis: millis(r.P99),
			Errors: r.errors(), CPUMicrosPerRequest: micros(r.CPUPerReq), DBCPUMicrosPerRequest: micros(r.DBCPUPerReq),
			OwnCPUMicrosPerRequest: micros(r.ownCPU()), RatioToFloor: r.FloorRatio, RatioToBaseline: r.Ratio,
			PeakRSSMB: r.PeakRSSKB >> 10, Met: r.Err == nil && len(r.Failed) == 0, Missed: r.Failed}
		if f := r.Floor; f != nil {
			j.FloorRPS, j.FloorP99Millis, j.FloorCPUMicrosPerRequest, j.FloorDBCPUMicrosPerRequest, j.Floor =
				f.RPS, millis(f.P99), micros(f.CPU), micros(f.DBCPU), f.What
		}
		if r.Err != nil {
			j.Error = r.Err.Error()
		}
		rows = append(rows, j)
	}
	b, err := json.MarshalIndent(rows, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
