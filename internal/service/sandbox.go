package service

import (
	"context"
	"errors"
	"time"

	"github.com/posgate/posgate"
)

// SandboxClockView is the sandbox clock as the operator API shows it
// (docs/api.md §20): the time every rule of the demo server reads, the real
// time, and how far apart they are.
type SandboxClockView struct {
	Now           time.Time `json:"now"`
	RealNow       time.Time `json:"realNow"`
	OffsetSeconds int64     `json:"offsetSeconds"`
}

// SetSandboxClockRequest moves the sandbox clock forward to Now (RFC 3339).
type SetSandboxClockRequest struct {
	Now *string `json:"now"`
}

// AdvanceSandboxClockRequest moves the sandbox clock forward by Seconds.
type AdvanceSandboxClockRequest struct {
	Seconds *int64 `json:"seconds"`
}

// errNoSandbox answers the sandbox use cases of a server that is not in
// demo mode; its HTTP routes are not even registered there.
func errNoSandbox() error {
	return posgate.Errorf(posgate.ENOTFOUND, "The sandbox clock exists only on a demo server (posgate serve --demo).")
}

// SandboxClock shows the demo server's sandbox clock to an unrestricted
// operator.
func (s *Service) SandboxClock(ctx context.Context, p *posgate.Principal) (*SandboxClockView, error) {
	if err := s.installation(p); err != nil {
		return nil, err
	}
	if s.cfg.Sandbox == nil {
		return nil, errNoSandbox()
	}
	return s.sandboxView(), nil
}

// SetSandboxClock moves the sandbox clock forward to a given time; an
// earlier time than its own is a 409 (the clock never goes back).
func (s *Service) SetSandboxClock(ctx context.Context, p *posgate.Principal, req *SetSandboxClockRequest) (*SandboxClockView, error) {
	if err := s.installation(p); err != nil {
		return nil, err
	}
	if s.cfg.Sandbox == nil {
		return nil, errNoSandbox()
	}
	if req.Now == nil || *req.Now == "" {
		return nil, invalid("now", "The now field is required.")
	}
	t, err := time.Parse(time.RFC3339Nano, *req.Now)
	if err != nil {
		return nil, invalid("now", "The now field must be an RFC 3339 date-time (e.g. 2030-01-01T00:00:00Z).")
	}
	if _, err := s.cfg.Sandbox.Set(t); err != nil {
		return nil, err
	}
	return s.sandboxView(), nil
}

// AdvanceSandboxClock moves the sandbox clock forward by a number of
// seconds (at least 1).
func (s *Service) AdvanceSandboxClock(ctx context.Context, p *posgate.Principal, req *AdvanceSandboxClockRequest) (*SandboxClockView, error) {
	if err := s.installation(p); err != nil {
		return nil, err
	}
	if s.cfg.Sandbox == nil {
		return nil, errNoSandbox()
	}
	if req.Seconds == nil {
		return nil, invalid("seconds", "The seconds field is required.")
	}
	if *req.Seconds <= 0 || *req.Seconds > int64(posgate.MaxSandboxOffset/time.Second) {
		return nil, invalid("seconds", "The seconds field must be an integer from 1 to 3153600000.")
	}
	if _, err := s.cfg.Sandbox.Advance(time.Duration(*req.Seconds) * time.Second); err != nil {
		return nil, err
	}
	return s.sandboxView(), nil
}

func (s *Service) sandboxView() *SandboxClockView {
	c := s.cfg.Sandbox
	off := c.Offset()
	real := c.Real()
	return &SandboxClockView{Now: real.Add(off), RealNow: real, OffsetSeconds: int64(off / time.Second)}
}

// sandboxStartOver is what a demo server adds to the conflict of a
// transaction id used before: running an example again (the README's
// checkout) re-sends its transaction ids.
const sandboxStartOver = "This is a sandbox: send a new transactionId, or run 'posgate demo reset' to start over from the demo data set."

// sandboxHint returns err, with sandboxStartOver added to its message on a
// demo server when err is the conflict of transactionID being recorded
// already with other content (docs/api.md §20.1).
func (s *Service) sandboxHint(err error, transactionID string) error {
	if s.cfg.Sandbox == nil || !errors.Is(err, posgate.TransactionTaken(transactionID)) {
		return err
	}
	return posgate.Errorf(posgate.ECONFLICT, "%s %s", posgate.ErrorMessage(err), sandboxStartOver)
}
