package storekit

import (
	"strconv"
	"strings"

	"github.com/posgate/posgate"
)

// ImportLogColumns are the import log's columns but seq, in the order ImportLogArgs
// gives them and the stores scan them.
const ImportLogColumns = `pos_system_id, company_id, kind, created_count, updated_count, failed_count,
	started_at, finished_at, client_id, person_id, channel`

// ImportLogArgs are r's values for ImportLogColumns; at renders a time.
func ImportLogArgs(r *posgate.ImportRecord, at func(t any) any) []any {
	return []any{r.POSSystemID, r.CompanyID, r.Kind, r.Created, r.Updated, r.Failed,
		at(r.StartedAt), at(r.FinishedAt), r.ClientID, r.PersonID, string(r.Channel)}
}

// ImportLogList is the query of ListImports, with its arguments; param
// renders the n-th (1-based) parameter.
func ImportLogList(posSystemID string, companyIDs []string, limit int, param func(n int) string) (string, []any) {
	args := []any{posSystemID}
	where := "pos_system_id = " + param(1)
	if len(companyIDs) > 0 {
		ps := make([]string, len(companyIDs))
		for i, c := range companyIDs {
			args = append(args, c)
			ps[i] = param(len(args))
		}
		where += " AND company_id IN (" + strings.Join(ps, ", ") + ")"
	}
	return `SELECT seq, ` + ImportLogColumns + ` FROM import_log WHERE ` + where + ` ORDER BY seq DESC LIMIT ` + strconv.Itoa(max(limit, 0)), args
}
