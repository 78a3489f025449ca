package importfile

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/codec/datetime"
	"github.com/posgate/posgate/internal/service"
)

// The CSV files of the imports (docs/guides/promotions-and-catalogue.md, "The promotions CSV format"), as posgate import
// and the portal's upload take them, converted to the POS API's import
// bodies; each conversion returns the line each item starts on, so that a
// result's item numbers can be told as lines.

// ProductColumns are the columns a CSV file of products may have.
var ProductColumns = []string{"productId", "productName", "productCategoryId", "productCategory", "manufacturer", "price"}

// CategoryColumns are the columns a CSV file of categories may have.
var CategoryColumns = []string{"posProductCategoryId", "name", "posProductParentCategoryId", "posCatalogId"}

// csvColumns are the columns a CSV file of promotions may have (README:
// "CSV format").
var csvColumns = []string{"id", "name", "useForAllCategories", "useForAllProducts", "locationIds", "categoryIds", "productIds",
	"startDate", "endDate", "daysOfWeek", "recurrenceStartDate", "recurrenceEndDate", "promotionType", "value",
	"priority", "stackable", "minQuantity", "minBasketAmount", "requiresCoupon",
	"buyQuantity", "getQuantity", "getProductIds", "maxApplications",
	"redemptionQuantity", "redemptionPerCustomer"}

// csvItem is an import item as the CSV conversion builds it; nil fields
// are left out of the JSON.
type csvItem struct {
	ID                  string        `json:"id"`
	Name                *string       `json:"name,omitempty"`
	UseForAllCategories *bool         `json:"useForAllCategories,omitempty"`
	UseForAllProducts   *bool         `json:"useForAllProducts,omitempty"`
	LocationIDs         []string      `json:"locationIds,omitempty"`
	CategoryIDs         []string      `json:"categoryIds,omitempty"`
	ProductIDs          []string      `json:"productIds,omitempty"`
	Validities          []csvValidity `json:"promotionValidities,omitempty"`
	Results             []csvResult   `json:"promotionResults,omitempty"`
	Priority            csvNumber     `json:"priority,omitempty"`
	Stackable           *bool         `json:"stackable,omitempty"`
	MinQuantity         csvNumber     `json:"minQuantity,omitempty"`
	MinBasketAmount     csvNumber     `json:"minBasketAmount,omitempty"`
	RequiresCoupon      *bool         `json:"requiresCoupon,omitempty"`
	Redemption          *csvBudget    `json:"redemption,omitempty"`
	first               []string      // the promotion's cells of its first row
}

// csvNumber is a number cell as JSON (nil: empty, left out).
type csvNumber = json.RawMessage

// numberCell converts a number cell; nil when it is empty.
func numberCell(cell func(string) string, name string) (csvNumber, error) {
	v := cell(name)
	if v == "" {
		return nil, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || !json.Valid([]byte(v)) {
		return nil, fmt.Errorf("%s %q is not a number (use a decimal point: 2.5)", name, v)
	}
	return csvNumber(strconv.FormatFloat(f, 'f', -1, 64)), nil
}

type csvValidity struct {
	StartDate  string         `json:"startDate,omitempty"`
	EndDate    string         `json:"endDate,omitempty"`
	Recurrence *csvRecurrence `json:"recurrence,omitempty"`
}

type csvRecurrence struct {
	DaysOfWeek []string `json:"daysOfWeek,omitempty"`
	StartDate  string   `json:"startDate,omitempty"`
	EndDate    string   `json:"endDate,omitempty"`
}

// csvBudget is a promotion's budget (docs/api.md §9.7): its numbers as
// written, checked as integers.
type csvBudget struct {
	Quantity    json.RawMessage `json:"quantity,omitempty"`
	PerCustomer json.RawMessage `json:"perCustomer,omitempty"`
}

type csvResult struct {
	PromotionType   string          `json:"promotionType,omitempty"`
	Value           json.RawMessage `json:"value,omitempty"`
	BuyQuantity     csvNumber       `json:"buyQuantity,omitempty"`
	GetQuantity     csvNumber       `json:"getQuantity,omitempty"`
	GetProductIDs   []string        `json:"getProductIds,omitempty"`
	MaxApplications csvNumber       `json:"maxApplications,omitempty"`
}

// promotionCells are the columns that describe the promotion rather than
// one of its validities or results: a row continuing a promotion leaves
// them empty or repeats them.
var promotionCells = []string{"name", "useForAllCategories", "useForAllProducts", "locationIds", "categoryIds", "productIds",
	"priority", "stackable", "minQuantity", "minBasketAmount", "requiresCoupon",
	"redemptionQuantity", "redemptionPerCustomer"}

// PromotionsCSV converts a CSV file of promotions to an import body written to
// w, and returns the line each item starts on. Consecutive rows with the
// same (non-empty) id are one promotion; each row adds a validity and a
// result when it has cells for them. It refuses, naming the line, what the
// server would refuse as a whole body: unknown columns, bad booleans,
// numbers or date-times, and a continuation row that contradicts the first.
func PromotionsCSV(r io.Reader, w io.Writer) ([]int, error) {
	cr := csv.NewReader(bufio.NewReaderSize(r, 1<<16))
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err == io.EOF {
		return nil, errors.New("the file is empty: it needs a header line")
	} else if err != nil {
		return nil, err
	}
	col := map[string]int{}
	for i, h := range head {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		known := false
		for _, c := range csvColumns {
			known = known || c == h
		}
		if !known {
			return nil, fmt.Errorf("line 1: unknown column %q (known: %s)", h, strings.Join(csvColumns, ", "))
		}
		if _, dup := col[h]; dup {
			return nil, fmt.Errorf("line 1: column %q appears twice", h)
		}
		col[h] = i
	}
	if _, ok := col["id"]; !ok {
		return nil, errors.New("line 1: the header has no id column")
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	if _, err := bw.WriteString(`{"items":[`); err != nil {
		return nil, err
	}
	var lines []int
	var cur *csvItem
	var bad badLines
	flush := func() error {
		if cur == nil {
			return nil
		}
		b, err := json.Marshal(cur)
		if err != nil {
			return err
		}
		if len(lines) > 1 {
			bw.WriteByte(',')
		}
		_, err = bw.Write(b)
		cur = nil
		return err
	}
	for !bad.full() {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		} else if line, msg, ok := parseErrorLine(err); ok {
			bad.add(line, "%s", msg)
			continue
		} else if err != nil {
			return nil, err
		}
		line, _ := cr.FieldPos(0)
		cell := func(name string) string {
			if i, ok := col[name]; ok && i < len(rec) {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		id := cell("id")
		if cur == nil || id == "" || id != cur.ID {
			if err := flush(); err != nil {
				return nil, err
			}
			cur = &csvItem{ID: id}
			lines = append(lines, line)
			if err := cur.promotion(cell); err != nil {
				bad.add(line, "%v", err)
				continue
			}
		} else {
			differs := false
			for i, name := range promotionCells {
				if v := cell(name); v != "" && v != cur.first[i] && !differs {
					bad.add(line, "%s %q differs from the first line of promotion %q (%q); leave it empty on its further lines",
						name, v, id, cur.first[i])
					differs = true
				}
			}
			if differs {
				continue
			}
		}
		if err := cur.row(cell); err != nil {
			bad.add(line, "%v", err)
		}
	}
	if err := bad.err(); err != nil {
		return nil, err
	}
	if err := flush(); err != nil {
		return nil, err
	}
	bw.WriteString(`]}`)
	return lines, bw.Flush()
}

// promotion fills in the promotion's own cells from its first row.
func (it *csvItem) promotion(cell func(string) string) error {
	for _, name := range promotionCells {
		it.first = append(it.first, cell(name))
	}
	if v := cell("name"); v != "" {
		it.Name = &v
	}
	for _, f := range []struct {
		name string
		dst  **bool
	}{{"useForAllCategories", &it.UseForAllCategories}, {"useForAllProducts", &it.UseForAllProducts},
		{"stackable", &it.Stackable}, {"requiresCoupon", &it.RequiresCoupon}} {
		v := cell(f.name)
		if v == "" {
			continue
		}
		b, err := parseBool(v)
		if err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		*f.dst = &b
	}
	it.LocationIDs = splitCell(cell("locationIds"))
	it.CategoryIDs = splitCell(cell("categoryIds"))
	it.ProductIDs = splitCell(cell("productIds"))
	for _, f := range []struct {
		name string
		dst  *csvNumber
	}{{"priority", &it.Priority}, {"minQuantity", &it.MinQuantity}, {"minBasketAmount", &it.MinBasketAmount}} {
		var err error
		if *f.dst, err = numberCell(cell, f.name); err != nil {
			return err
		}
	}
	var b csvBudget
	for _, f := range []struct {
		name string
		dst  *json.RawMessage
	}{{"redemptionQuantity", &b.Quantity}, {"redemptionPerCustomer", &b.PerCustomer}} {
		v := cell(f.name)
		if v == "" {
			continue
		}
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			return fmt.Errorf("%s %q is not a whole number", f.name, v)
		}
		*f.dst = json.RawMessage(v)
	}
	if b.Quantity != nil || b.PerCustomer != nil {
		it.Redemption = &b
	}
	return nil
}

// row adds the row's validity and result, if it has them.
func (it *csvItem) row(cell func(string) string) error {
	for _, name := range []string{"startDate", "endDate", "recurrenceStartDate", "recurrenceEndDate"} {
		if v := cell(name); v != "" {
			if _, err := datetime.Parse(v); err != nil {
				return fmt.Errorf("%s %q is not an ISO 8601 date-time (e.g. 2030-05-01T08:00:00Z)", name, v)
			}
		}
	}
	v := csvValidity{StartDate: cell("startDate"), EndDate: cell("endDate")}
	if days, from, to := splitCell(cell("daysOfWeek")), cell("recurrenceStartDate"), cell("recurrenceEndDate"); days != nil || from != "" || to != "" {
		v.Recurrence = &csvRecurrence{DaysOfWeek: days, StartDate: from, EndDate: to}
	}
	if v.StartDate != "" || v.EndDate != "" || v.Recurrence != nil {
		it.Validities = append(it.Validities, v)
	}
	typ, value := cell("promotionType"), cell("value")
	if typ != "" || value != "" {
		res := csvResult{PromotionType: typ, GetProductIDs: splitCell(cell("getProductIds"))}
		for _, f := range []struct {
			name string
			dst  *csvNumber
		}{{"buyQuantity", &res.BuyQuantity}, {"getQuantity", &res.GetQuantity}, {"maxApplications", &res.MaxApplications}} {
			var err error
			if *f.dst, err = numberCell(cell, f.name); err != nil {
				return err
			}
		}
		if value != "" {
			f, err := strconv.ParseFloat(value, 64)
			if err != nil || !json.Valid([]byte(value)) {
				return fmt.Errorf("value %q is not a number (use a decimal point: 2.5)", value)
			}
			res.Value = json.RawMessage(strconv.FormatFloat(f, 'g', -1, 64))
		}
		it.Results = append(it.Results, res)
	}
	return nil
}

func parseBool(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "true", "1", "yes":
		return true, nil
	case "false", "0", "no":
		return false, nil
	}
	return false, fmt.Errorf("%q is not true or false", s)
}

// splitCell splits a list cell at semicolons ("LOC1;LOC2"); nil when empty.
func splitCell(s string) []string {
	if s == "" {
		return nil
	}
	var out []string
	for _, x := range strings.Split(s, ";") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// FlatCSV returns a conversion of a CSV file whose header names some of
// columns (in any order; posgate's JSON names) into an import body, one
// item per row. An empty cell is an absent value; the number column, when
// set, must hold a JSON number (a price is written as in JSON: 2.50).
func FlatCSV(columns []string, number string) func(r io.Reader, w io.Writer) ([]int, error) {
	return func(r io.Reader, w io.Writer) ([]int, error) {
		cr := csv.NewReader(r)
		cr.FieldsPerRecord = -1
		head, err := cr.Read()
		if err == io.EOF {
			return nil, errors.New("the file is empty: it needs a header row")
		} else if err != nil {
			return nil, err
		}
		if len(head) > 0 {
			head[0] = strings.TrimPrefix(head[0], "\ufeff")
		}
		for _, h := range head {
			if !slices.Contains(columns, h) {
				return nil, fmt.Errorf("line 1: unknown column %q (known: %s)", h, strings.Join(columns, ", "))
			}
		}
		bw := &errWriter{w: w}
		bw.write(`{"items":[`)
		var lines []int
		var bad badLines
	rows:
		for !bad.full() {
			rec, err := cr.Read()
			if err == io.EOF {
				break
			} else if line, msg, ok := parseErrorLine(err); ok {
				bad.add(line, "%s", msg)
				continue
			} else if err != nil {
				return nil, err
			}
			line, _ := cr.FieldPos(0)
			if len(rec) != len(head) {
				bad.add(line, "%d cells, the header has %d", len(rec), len(head))
				continue
			}
			item := map[string]any{}
			for i, cell := range rec {
				switch {
				case cell == "":
				case head[i] == number:
					if v := jsontext.Value(cell); v.Kind() != '0' || !v.IsValid() {
						bad.add(line, "%s %q is not a number", number, cell)
						continue rows
					}
					item[head[i]] = json.RawMessage(cell)
				default:
					item[head[i]] = cell
				}
			}
			b, _ := json.Marshal(item)
			if len(lines) > 0 {
				bw.write(",")
			}
			bw.write(string(b))
			lines = append(lines, line)
		}
		if err := bad.err(); err != nil {
			return nil, err
		}
		bw.write("]}")
		return lines, bw.err
	}
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) write(s string) {
	if e.err == nil {
		_, e.err = io.WriteString(e.w, s)
	}
}

// maxBadLines is how many bad lines a file check names before it stops
// reading: enough to fix a file in one go (service.MaxReportedItems).
const maxBadLines = service.MaxReportedItems

// badLines collects the bad lines of a file the command line or the portal checks before importing
// it, so that the refusal names every one of them (up to maxBadLines)
// rather than the first.
type badLines struct {
	fields map[string][]string
	n      int
}

// add records a bad line.
func (b *badLines) add(line int, format string, args ...any) {
	if b.fields == nil {
		b.fields = map[string][]string{}
	}
	b.n++
	key := fmt.Sprintf("line %d", line)
	b.fields[key] = append(b.fields[key], fmt.Sprintf(format, args...))
}

// full reports whether no more lines need reading.
func (b *badLines) full() bool { return b.n >= maxBadLines }

// err is the refusal naming the bad lines; nil when there are none.
func (b *badLines) err() error {
	var msg string
	switch {
	case b.n == 0:
		return nil
	case b.n == 1:
		msg = "1 line is bad; nothing was imported."
	case b.full():
		msg = fmt.Sprintf("At least %d lines are bad (the first %d are listed); nothing was imported.", b.n, b.n)
	default:
		msg = fmt.Sprintf("%d lines are bad; nothing was imported.", b.n)
	}
	return &posgate.Error{Code: posgate.EINVALID, Message: msg, Fields: b.fields}
}

// parseErrorLine reports the line of a CSV record the csv package could not
// parse, and what was wrong; it reads on at the next record.
func parseErrorLine(err error) (int, string, bool) {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return pe.StartLine, fmt.Sprintf("column %d: %v", pe.Column, pe.Err), true
	}
	return 0, "", false
}
