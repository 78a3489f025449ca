package storekit

import (
	"strings"
	"time"

	"github.com/posgate/posgate"
)

// AuditColumns are the audit_log columns both stores insert and select, in
// the order of AuditArgs.
const AuditColumns = `id, at, actor_subject, actor_kind, actor_client_id, channel, action,
	target_type, target_id, pos_system_id, company_id, location_id, before_json, after_json, trace_id, user_agent`

// AuditArgs are the statement arguments of AuditColumns for e; at is the
// entry's time as the store keeps times.
func AuditArgs(e *posgate.AuditEntry, at any) []any {
	return []any{e.ID, at, e.Actor.Subject, e.Actor.Kind, e.Actor.ClientID, string(e.Channel), e.Action,
		e.Target.Type, e.Target.ID, e.Target.POSSystemID, e.Target.CompanyID, e.Target.LocationID,
		jsonArg(e.Before), jsonArg(e.After), e.TraceID, e.UserAgent}
}

// jsonArg is NULL for an absent resource (nil or JSON null), else its text.
func jsonArg(b []byte) any {
	if len(b) == 0 || string(b) == "null" {
		return nil
	}
	return string(b)
}

// AuditWhere builds the WHERE clause (with its arguments) that selects
// q's entries; ph renders the n-th placeholder (1-based) and timeArg a time
// as the store compares times. Both stores use it, so that their filters
// and the reach rule cannot drift apart.
func AuditWhere(q posgate.AuditQuery, ph func(n int) string, timeArg func(time.Time) any) (string, []any) {
	var conds []string
	var args []any
	add := func(cond string, arg any) {
		args = append(args, arg)
		conds = append(conds, strings.ReplaceAll(cond, "?", ph(len(args))))
	}
	if q.Actor != "" {
		args = append(args, q.Actor)
		p := ph(len(args))
		conds = append(conds, "(actor_subject = "+p+" OR actor_client_id = "+p+")")
	}
	for _, f := range []struct{ col, v string }{{"action", q.Action}, {"target_type", q.TargetType}, {"target_id", q.TargetID},
		{"pos_system_id", q.POSSystemID}, {"company_id", q.CompanyID}, {"location_id", q.LocationID}} {
		if f.v != "" {
			add(f.col+" = ?", f.v)
		}
	}
	if !q.From.IsZero() {
		add("at >= ?", timeArg(q.From))
	}
	if !q.To.IsZero() {
		add("at < ?", timeArg(q.To))
	}
	if q.ReachPOSSystemID != "" {
		add("pos_system_id = ?", q.ReachPOSSystemID)
	}
	if len(q.ReachCompanyIDs) > 0 {
		var in []string
		for _, c := range q.ReachCompanyIDs {
			args = append(args, c)
			in = append(in, ph(len(args)))
		}
		conds = append(conds, "company_id IN ("+strings.Join(in, ", ")+")")
	}
	if len(q.ReachLocationIDs) > 0 {
		var in []string
		for _, l := range q.ReachLocationIDs {
			args = append(args, l)
			in = append(in, ph(len(args)))
		}
		conds = append(conds, "location_id IN ("+strings.Join(in, ", ")+")")
	}
	if q.BeforeSeq > 0 {
		add("seq < ?", q.BeforeSeq)
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}
