package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/client"
	"github.com/posgate/posgate/internal/codec/datetime"
	"github.com/posgate/posgate/internal/importfile"
	"github.com/posgate/posgate/internal/service"
)

// cmdImportPromotions sends a JSON or CSV file of promotions to a running
// posgate through its POS API (the promotion import, docs/api.md §9), as a
// POS system would, showing a progress bar while the file uploads, and
// prints the result.
func cmdImportPromotions(ctx context.Context, env *cli, args []string) error {
	return runImport(ctx, env, args, importKind{name: "promotions", noun: "promotion", route: "promotions", csv: importfile.PromotionsCSV})
}

// importKind is what differs between the imports the CLI sends: the name
// of the command's things, the route's last segment and the conversion of
// a CSV file into the route's JSON body (returning each item's line).
type importKind struct {
	name, noun, route string
	csv               func(r io.Reader, w io.Writer) ([]int, error)
}

// runImport is the import commands' one implementation (promotions,
// products, productCategories).
func runImport(ctx context.Context, env *cli, args []string, k importKind) error {
	server := defaultServer
	err := runImportOn(ctx, env, args, k, &server)
	var se *serverError
	if err == nil || errors.Is(err, flag.ErrHelp) || errors.As(err, &se) || server == "" {
		return err
	}
	var ue usageError
	if errors.As(err, &ue) {
		return err
	}
	return &serverError{server: strings.TrimSuffix(server, "/"), err: err}
}

// runImportOn is runImport; it sets *server once it knows it, so that its
// errors name the server.
func runImportOn(ctx context.Context, env *cli, args []string, k importKind, server *string) error {
	*server = ""
	fs := env.newFlags("import " + k.name)
	baseURL := fs.String("server", defaultServer, "address of the running posgate's API")
	authURL := fs.String("auth-url", "", "address of the identity provider (default --server)")
	clientID := fs.String("client-id", "", "client id of a POS client (scope pos_integration)")
	clientSecret := fs.String("client-secret", "", "its secret")
	posID := fs.String("pos", "", "POS system id (default: the client's, from its token)")
	company := fs.String("company", "", "company id (required)")
	format := fs.String("format", "", "json or csv (default: from the file name, else json)")
	quiet := fs.Bool("quiet", false, "no progress bar (there is none unless standard error is a terminal)")
	timeout := fs.Duration("timeout", 15*time.Minute, "how long to wait for the whole import")
	pos, err := env.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		fs.Usage()
		return fmt.Errorf("import %s takes one FILE, got %d arguments", k.name, len(pos))
	}
	switch {
	case *company == "":
		return errors.New("--company is required")
	case *clientID == "" || *clientSecret == "":
		return errors.New("--client-id and --client-secret (or POSGATE_CLIENT_ID and POSGATE_CLIENT_SECRET) are required")
	}
	file := pos[0]
	if *baseURL, err = serverURL("--server", *baseURL); err != nil {
		return err
	}
	if *authURL != "" {
		if *authURL, err = serverURL("--auth-url", *authURL); err != nil {
			return err
		}
	}
	*server = *baseURL
	kind := strings.ToLower(*format)
	if kind == "" {
		kind = "json"
		if strings.EqualFold(filepath.Ext(file), ".csv") {
			kind = "csv"
		}
	}
	if kind != "json" && kind != "csv" {
		return fmt.Errorf("--format must be json or csv, not %q", *format)
	}
	info, err := os.Stat(file)
	if err != nil {
		return err
	}
	// A CSV file is checked whole before anything is sent, so that a
	// mistake in its last line does not cost an upload; the check also
	// maps each item to the line it starts on, for the errors table.
	var lines []int
	if kind == "csv" {
		f, err := os.Open(file)
		if err != nil {
			return err
		}
		lines, err = k.csv(f, io.Discard)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
	}

	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	base := strings.TrimSuffix(*baseURL, "/")
	auth := strings.TrimSuffix(*authURL, "/")
	if auth == "" {
		auth = base
	}
	tok, err := clientToken(ctx, auth, *clientID, *clientSecret, posgate.ScopePOSIntegration)
	if err != nil {
		return err
	}
	if *posID == "" {
		if *posID = tokenPOSSystem(tok); *posID == "" {
			return errors.New("the client's token names no POS system: give --pos")
		}
	}

	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	progress := &progressReader{r: f, total: info.Size()}
	var body io.Reader = progress
	if kind == "csv" {
		pr, pw := io.Pipe()
		go func() {
			_, err := k.csv(progress, pw)
			pw.CloseWithError(err)
		}()
		body = pr
	}
	stop := func() {}
	if !*quiet && env.terminal {
		stop = progress.show(env.stderr, filepath.Base(file))
	}
	target := base + "/pos/" + url.PathEscape(*posID) + "/company/" + url.PathEscape(*company) + "/import/" + k.route
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, body)
	if err != nil {
		stop()
		return err
	}
	if kind == "json" {
		req.ContentLength = info.Size()
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("User-Agent", "posgate-cli/"+cliVersion)
	resp, err := http.DefaultClient.Do(req)
	stop()
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("import: reading the answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return problemError(resp.Status, raw)
	}
	var env2 struct {
		Data posgate.ImportResult `json:"data"`
	}
	if err := json.Unmarshal(raw, &env2); err != nil {
		return fmt.Errorf("import: unexpected answer: %v: %s", err, raw)
	}
	printImportResult(env, &env2.Data, lines)
	if env2.Data.Status == posgate.ImportFailed {
		return fmt.Errorf("import failed: no %s was stored", k.noun)
	}
	return nil
}

// clientToken gets a token of scope with the client credentials grant.
func clientToken(ctx context.Context, authURL, id, secret, scope string) (string, error) {
	form := url.Values{"grant_type": {"client_credentials"}, "scope": {scope}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, authURL+"/connect/token", strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(id), url.QueryEscape(secret))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	defer resp.Body.Close()
	var tr struct {
		AccessToken string `json:"access_token"`
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tr); err != nil {
		return "", fmt.Errorf("token: %s: %w", resp.Status, err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("token: %s: %s: %s", resp.Status, tr.Error, tr.Description)
	}
	return tr.AccessToken, nil
}

// tokenPOSSystem reads the pos_system_id claim of a token without checking
// it (the server does): the client's POS system is the only one it may use.
func tokenPOSSystem(tok string) string {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return ""
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return ""
	}
	var claims struct {
		POSSystemID string `json:"pos_system_id"`
	}
	json.Unmarshal(b, &claims)
	return claims.POSSystemID
}

// problemError renders a problem answer (RFC 9457) as an error.
func problemError(status string, raw []byte) error {
	var p struct {
		Detail string              `json:"detail"`
		Errors map[string][]string `json:"errors"`
	}
	if err := json.Unmarshal(raw, &p); err != nil || p.Detail == "" {
		return fmt.Errorf("import: %s: %s", status, strings.TrimSpace(string(raw)))
	}
	if len(p.Errors) > 0 {
		return &posgate.Error{Code: posgate.EINVALID, Message: "import: " + status + ": the server refused the file", Fields: p.Errors}
	}
	return fmt.Errorf("import: %s: %s", status, p.Detail)
}

// printImportResult prints the counts, then errors and warnings as tables;
// lines (for a CSV file) gives the line each item starts on.
func printImportResult(env *cli, r *posgate.ImportResult, lines []int) {
	if env.jsonOutput() {
		env.emit(r, nil)
		return
	}
	w := env.stdout
	fmt.Fprintf(w, "status:   %s\ncreated:  %d\nupdated:  %d\nerrors:   %d\nwarnings: %d\n", r.Status, r.CreatedCount, r.UpdatedCount, len(r.Errors), len(r.Warnings))
	line := func(row int) string {
		if row >= 1 && row <= len(lines) {
			return strconv.Itoa(lines[row-1])
		}
		return "-"
	}
	table := func(title string, head []string, n int, cells func(i int) []string) {
		if n == 0 {
			return
		}
		fmt.Fprintf(w, "\n%s\n", title)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		if lines == nil {
			head = append(head[:1], head[2:]...)
		}
		fmt.Fprintln(tw, strings.Join(head, "\t"))
		for i := range n {
			c := cells(i)
			if lines == nil {
				c = append(c[:1], c[2:]...)
			}
			fmt.Fprintln(tw, strings.Join(c, "\t"))
		}
		tw.Flush()
	}
	table("ERRORS (not imported)", []string{"ROW", "LINE", "ID", "ERROR", "DETAILS"}, len(r.Errors), func(i int) []string {
		e := r.Errors[i]
		return []string{strconv.Itoa(e.RowNumber), line(e.RowNumber), e.EntityID, e.ErrorMessage, e.ErrorDetails}
	})
	table("WARNINGS (imported)", []string{"ROW", "LINE", "ID", "WARNING", "DETAILS"}, len(r.Warnings), func(i int) []string {
		e := r.Warnings[i]
		return []string{strconv.Itoa(e.RowNumber), line(e.RowNumber), e.EntityID, e.Message, e.Details}
	})
}

// progressReader counts what is read through it, for the progress bar.
type progressReader struct {
	r     io.Reader
	total int64
	n     atomic.Int64
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.n.Add(int64(n))
	return n, err
}

// show draws a progress bar on w ten times a second until the returned
// function is called, which draws it one last time and ends the line.
func (p *progressReader) show(w io.Writer, name string) func() {
	done := make(chan struct{})
	finished := make(chan struct{})
	draw := func(final bool) {
		n, total := p.n.Load(), max(p.total, 1)
		const width = 30
		filled := int(min(n*width/total, width))
		state := "uploading"
		switch {
		case final:
			state = "sent                                         "
		case n >= p.total:
			state = "waiting for the server to check and store it"
		}
		fmt.Fprintf(w, "\r%s [%s%s] %3d%%  %.1f/%.1f MB  %s ", name, strings.Repeat("#", filled), strings.Repeat("-", width-filled),
			n*100/total, float64(n)/1e6, float64(p.total)/1e6, state)
	}
	go func() {
		defer close(finished)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				draw(true)
				fmt.Fprintln(w)
				return
			case <-tick.C:
				draw(false)
			}
		}
	}()
	return func() { close(done); <-finished }
}

// cmdPromotionsList lists a company's promotions from the store, all or
// those that apply at a location and time (the carousel's query).
func cmdPromotionsList(ctx context.Context, env *cli, args []string) error {
	var posID, company, location, validAt *string
	return operatorCommand(ctx, env, "promotions list", args, 0, func(fs *flag.FlagSet) {
		posID = fs.String("pos", "", "POS system id (required)")
		company = fs.String("company", "", "company id (required)")
		location = fs.String("location", "", "only those that apply at this location (now, unless --valid-at)")
		validAt = fs.String("valid-at", "", "only those that apply at this date-time (ISO 8601)")
	}, func(a *client.Admin, _ []string) error {
		q := client.PromotionQuery{PosLocationID: *location}
		if *validAt != "" {
			t, err := datetime.Parse(*validAt)
			if err != nil {
				return fmt.Errorf("--valid-at %q is not an ISO 8601 date-time", *validAt)
			}
			q.ValidAt = t
		}
		// Every page: the command lists the company's promotions whole.
		ps, err := allPages(func(page, size int) ([]*posgate.Promotion, int, error) {
			q.Page, q.PageSize = page, size
			got, err := answer[*service.PromotionPage](a.ListPromotions(ctx, *posID, *company, q))
			if err != nil {
				return nil, 0, err
			}
			return got.Data, got.Page.Total, nil
		})
		if err != nil {
			return err
		}
		return table(env, []string{"ID", "NAME", "LOCATIONS", "VALIDITIES", "RESULTS", "UPDATED"}, ps, func(p *posgate.Promotion) []string {
			locs := strings.Join(p.LocationIDs, ",")
			if locs == "" {
				locs = "all"
			}
			var results []string
			for _, r := range p.Results {
				results = append(results, fmt.Sprintf("%s %s", r.PromotionType, strconv.FormatFloat(r.Value, 'g', -1, 64)))
			}
			return []string{p.ID, p.Name, locs, strconv.Itoa(len(p.Validities)), strings.Join(results, ","), stamp(p.UpdatedAt)}
		})
	})
}

// cmdCatalogueSet replaces a company's catalogue.
func cmdCatalogueSet(ctx context.Context, env *cli, args []string) error {
	var posID, company, categories, products, file *string
	return operatorCommand(ctx, env, "catalogue set", args, 0, func(fs *flag.FlagSet) {
		posID = fs.String("pos", "", "POS system id (required)")
		company = fs.String("company", "", "company id (required)")
		categories = fs.String("categories", "", "category ids, comma-separated")
		products = fs.String("products", "", "product ids, comma-separated")
		file = fs.String("file", "", `a JSON file {"categoryIds":[…],"productIds":[…]} instead of the lists`)
	}, func(a *client.Admin, _ []string) error {
		c := &service.ReplaceCatalogueRequest{CategoryIDs: splitList(*categories), ProductIDs: splitList(*products)}
		if *file != "" {
			if *categories != "" || *products != "" {
				return errors.New("give --file or the lists, not both")
			}
			b, err := os.ReadFile(*file)
			if err != nil {
				return err
			}
			var lists struct {
				CategoryIDs []string `json:"categoryIds"`
				ProductIDs  []string `json:"productIds"`
			}
			dec := json.NewDecoder(strings.NewReader(string(b)))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&lists); err != nil {
				return fmt.Errorf("%s: %w", *file, err)
			}
			c.CategoryIDs, c.ProductIDs = lists.CategoryIDs, lists.ProductIDs
		}
		cat, err := answer[*posgate.Catalogue](a.ReplaceCatalogue(ctx, *posID, *company, conv[client.ReplaceCatalogueRequest](c)))
		if err != nil {
			return err
		}
		env.say(cat, "catalogue of %s/%s: %d categories, %d products\n", cat.POSSystemID, cat.CompanyID, len(cat.CategoryIDs), len(cat.ProductIDs))
		return nil
	})
}

// cmdCatalogueShow prints a company's catalogue.
func cmdCatalogueShow(ctx context.Context, env *cli, args []string) error {
	var posID, company *string
	return operatorCommand(ctx, env, "catalogue show", args, 0, func(fs *flag.FlagSet) {
		posID = fs.String("pos", "", "POS system id (required)")
		company = fs.String("company", "", "company id (required)")
	}, func(a *client.Admin, _ []string) error {
		c, err := answer[*posgate.Catalogue](a.GetCatalogue(ctx, *posID, *company))
		if err != nil {
			return err
		}
		type entry struct{ kind, id string }
		var rows []entry
		for _, id := range c.CategoryIDs {
			rows = append(rows, entry{"category", id})
		}
		for _, id := range c.ProductIDs {
			rows = append(rows, entry{"product", id})
		}
		sort.SliceStable(rows, func(i, j int) bool { return rows[i].kind < rows[j].kind })
		return table(env, []string{"KIND", "ID"}, rows, func(e entry) []string { return []string{e.kind, e.id} })
	})
}
