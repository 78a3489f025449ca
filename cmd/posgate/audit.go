package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/client"
	"github.com/posgate/posgate/internal/service"
)

// The audit log's command (docs/api.md §22): the operator API's list, as far
// as the CLI's operator client reaches.

func cmdAuditList(ctx context.Context, env *cli, args []string) error {
	var req service.ListAuditRequest
	var size *int
	return operatorCommand(ctx, env, "audit list", args, 0, func(f *flag.FlagSet) {
		f.StringVar(&req.Actor, "actor", "", "only the writes of this actor (subject or client id)")
		f.StringVar(&req.Action, "action", "", "only this action, e.g. company.update")
		f.StringVar(&req.TargetType, "target-type", "", "only changes of this type of object, e.g. company")
		f.StringVar(&req.TargetID, "target-id", "", "only changes of the object with this id")
		f.StringVar(&req.POSSystemID, "pos", "", "only changes within this POS system")
		f.StringVar(&req.CompanyID, "company", "", "only changes within this company")
		f.StringVar(&req.LocationID, "location", "", "only changes within this location")
		f.StringVar(&req.From, "from", "", "only changes at or after this time (RFC 3339)")
		f.StringVar(&req.To, "to", "", "only changes before this time (RFC 3339)")
		f.StringVar(&req.Cursor, "cursor", "", "continue after an earlier page (its next cursor)")
		size = f.Int("limit", service.DefaultAuditPageSize, fmt.Sprintf("entries per page (1–%d), newest first", service.MaxAuditPageSize))
	}, func(a *client.Admin, _ []string) error {
		page, err := answer[*service.AuditPage](a.ListAuditEntries(ctx, client.AuditQuery{Actor: req.Actor, Action: req.Action,
			TargetType: req.TargetType, TargetID: req.TargetID, PosSystemID: req.POSSystemID, PosCompanyID: req.CompanyID,
			PosLocationID: req.LocationID, From: req.From, To: req.To, Cursor: req.Cursor, PageSize: *size}))
		if err != nil {
			return err
		}
		if err := table(env, []string{"TIME", "CHANNEL", "ACTOR", "ACTION", "TARGET", "PLACE"}, page.Entries, func(e *posgate.AuditEntry) []string {
			place := e.Target.POSSystemID
			for _, p := range []string{e.Target.CompanyID, e.Target.LocationID} {
				if p != "" {
					place += "/" + p
				}
			}
			return []string{stamp(e.Time), string(e.Channel), e.Actor.Subject, e.Action, e.Target.Type + " " + e.Target.ID, place}
		}); err != nil {
			return err
		}
		if page.NextCursor != nil {
			fmt.Fprintf(env.stderr, "more entries: --cursor %s\n", *page.NextCursor)
		}
		return nil
	})
}
