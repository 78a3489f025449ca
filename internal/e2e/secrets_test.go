package e2e

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/posgate/posgate/internal/app"
)

// TestSecretsNotKeptForReplay sends each operation that answers a secret
// (a client's creation and rotation, a webhook endpoint's creation and
// rotation) twice with one Idempotency-Key: the first answer shows the
// secret, the replay does not and says how to get one, and after each
// operation no table of the store holds the secret, except the webhook
// endpoint's own secret columns (it signs with it, docs/api.md §19.4).
func TestSecretsNotKeptForReplay(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn, allowLoopback)
		admin := s.adminToken(t)
		post := func(path, body, key string) req {
			return keyed(req{Method: "POST", Path: path, Token: admin, ContentType: "application/json", Body: body}, key)
		}
		hooks := "/admin/v1/pos-systems/clover/companies/demo-company/webhooks"
		var clientID, endpointID string
		cases := []struct {
			name   string
			q      func() req
			status int
			field  string
			rotate func() string // the route the replay's note names
			own    bool          // the secret is the webhook endpoint's signing secret
		}{
			{"client create", func() req {
				return post("/admin/v1/clients", `{"posSystemId":"clover","scopes":["pos_integration"]}`, "k-client")
			}, 201, "clientSecret", func() string { return "/admin/v1/clients/" + clientID + "/rotate-secret" }, false},
			{"client rotate-secret", func() req { return post("/admin/v1/clients/"+clientID+"/rotate-secret", "", "k-client-rotate") },
				200, "clientSecret", func() string { return "/admin/v1/clients/" + clientID + "/rotate-secret" }, false},
			{"webhook create", func() req {
				return post(hooks, `{"url":"http://127.0.0.1:9/hook","eventTypes":["coupon.issued"]}`, "k-hook")
			}, 201, "secret", func() string { return hooks + "/" + endpointID + "/rotate-secret" }, true},
			{"webhook rotate-secret", func() req { return post(hooks+"/"+endpointID+"/rotate-secret", "", "k-hook-rotate") },
				200, "secret", func() string { return hooks + "/" + endpointID + "/rotate-secret" }, true},
		}
		for _, c := range cases {
			first := mustFirst(t, s.request(t, c.q()), c.status)
			data := first.JSON(t)["data"].(map[string]any)
			secret, _ := data[c.field].(string)
			if len(secret) < 32 {
				t.Fatalf("%s: first answer's %s is %q: %s", c.name, c.field, secret, first.Body)
			}
			if _, ok := data["secretNote"]; ok {
				t.Fatalf("%s: first answer carries a secretNote: %s", c.name, first.Body)
			}
			if id, ok := data["clientId"].(string); ok && c.field == "clientSecret" {
				clientID = id
			}
			if id, ok := data["id"].(string); ok && c.field == "secret" {
				endpointID = id
			}

			replay := s.request(t, c.q())
			mustStatus(t, replay, c.status)
			if got := replay.Header.Get("Idempotent-Replayed"); got != "true" {
				t.Fatalf("%s: replay's Idempotent-Replayed %q", c.name, got)
			}
			if strings.Contains(string(replay.Body), secret) {
				t.Fatalf("%s: the replay shows the secret again: %s", c.name, replay.Body)
			}
			// The replay is the first answer without the secret, with the note.
			want := data
			delete(want, c.field)
			want["secretNote"] = "The secret was shown only in the first answer to this request and is not kept; rotate it (POST " +
				c.rotate() + ") to get a new one."
			wantBody, _ := json.Marshal(map[string]any{"data": want})
			if a, _ := canonical(string(replay.Body)); fmt.Sprint(a) != fmt.Sprint(mustCanonical(t, string(wantBody))) {
				t.Fatalf("%s: replay\n%s\nwant\n%s", c.name, replay.Body, wantBody)
			}

			for _, hit := range s.grepTables(t, secret) {
				if c.own && (hit == "webhook_endpoints.secret" || hit == "webhook_endpoints.previous_secret") {
					continue
				}
				t.Errorf("%s: the secret is stored in %s", c.name, hit)
			}
		}
		if clientID == "" || endpointID == "" {
			t.Fatal("no client or endpoint created")
		}
	})
}

func mustCanonical(t *testing.T, body string) any {
	t.Helper()
	v, ok := canonical(body)
	if !ok {
		t.Fatalf("not JSON: %s", body)
	}
	return v
}

// grepTables returns table.column of every value in every table of the
// server's database that holds needle, as text or as the hex of its bytes
// (how PostgreSQL shows bytea).
func (s *server) grepTables(t *testing.T, needle string) []string {
	t.Helper()
	ctx := context.Background()
	hexNeedle := hex.EncodeToString([]byte(needle))
	var hits []string
	match := func(table, column string, v any) {
		var text string
		switch v := v.(type) {
		case nil:
			return
		case []byte:
			text = string(v)
		case string:
			text = v
		default:
			b, err := json.Marshal(v)
			if err != nil {
				text = fmt.Sprint(v)
			} else {
				text = string(b)
			}
		}
		if strings.Contains(text, needle) || strings.Contains(strings.ToLower(text), hexNeedle) {
			hits = append(hits, table+"."+column)
		}
	}
	if app.IsPostgres(s.cfg.Database) {
		conn, err := pgx.Connect(ctx, s.cfg.Database)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		rows, err := conn.Query(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`)
		if err != nil {
			t.Fatal(err)
		}
		tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil || len(tables) < 10 {
			t.Fatalf("tables %v: %v", tables, err)
		}
		for _, table := range tables {
			rows, err := conn.Query(ctx, `SELECT * FROM `+pgx.Identifier{table}.Sanitize())
			if err != nil {
				t.Fatal(err)
			}
			fields := rows.FieldDescriptions()
			for rows.Next() {
				vals, err := rows.Values()
				if err != nil {
					t.Fatal(err)
				}
				for i, v := range vals {
					match(table, fields[i].Name, v)
				}
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
		}
		return hits
	}
	db, err := sql.Open("sqlite", s.cfg.Database+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var tables []string
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	rows.Close()
	if len(tables) < 10 {
		t.Fatalf("tables %v", tables)
	}
	for _, table := range tables {
		rows, err := db.QueryContext(ctx, `SELECT * FROM "`+table+`"`)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				match(table, cols[i], v)
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	return hits
}
