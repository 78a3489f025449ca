package importfile

import (
	"bytes"
	"errors"
	"strconv"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/posgate/posgate"
)

// PromotionItem is a promotion item of an import body (docs/api.md §9.1).
// Unknown properties are ignored, as on every POS endpoint.
type PromotionItem struct {
	ID                  string                      `json:"id"`
	Name                string                      `json:"name"`
	UseForAllCategories bool                        `json:"useForAllCategories"`
	UseForAllProducts   bool                        `json:"useForAllProducts"`
	LocationIDs         []string                    `json:"locationIds"`
	CategoryIDs         []string                    `json:"categoryIds"`
	ProductIDs          []string                    `json:"productIds"`
	PromotionValidities []posgate.PromotionValidity `json:"promotionValidities"`
	PromotionResults    []posgate.PromotionResult   `json:"promotionResults"`
	Priority            int                         `json:"priority"`
	Stackable           bool                        `json:"stackable"`
	MinQuantity         float64                     `json:"minQuantity"`
	MinBasketAmount     float64                     `json:"minBasketAmount"`
	RequiresCoupon      bool                        `json:"requiresCoupon"`
	// Redemption is the budget (docs/api.md §9.7).
	Redemption *posgate.PromotionRedemption `json:"redemption"`
}

// PlainPromotionItem is PromotionItem without its decoding method: the
// reflective decoder reads it when an item is not an object, to produce the
// error every other endpoint gives (and the fuzz test compares the two).
type PlainPromotionItem PromotionItem

// Promotion returns the item as a promotion of the company.
func (it *PromotionItem) Promotion(posSystemID, companyID string) *posgate.Promotion {
	return &posgate.Promotion{
		POSSystemID:         posSystemID,
		CompanyID:           companyID,
		ID:                  it.ID,
		Name:                it.Name,
		UseForAllCategories: it.UseForAllCategories,
		UseForAllProducts:   it.UseForAllProducts,
		LocationIDs:         it.LocationIDs,
		CategoryIDs:         it.CategoryIDs,
		ProductIDs:          it.ProductIDs,
		Validities:          it.PromotionValidities,
		Results:             it.PromotionResults,
		Priority:            it.Priority,
		Stackable:           it.Stackable,
		MinQuantity:         it.MinQuantity,
		MinBasketAmount:     it.MinBasketAmount,
		RequiresCoupon:      it.RequiresCoupon,
		Redemption:          it.Redemption,
	}
}

// UnmarshalJSONFrom reads an item token by token. It exists for speed: the
// reflective decoder spends about four times as long per item, which at
// 100,000 items is most of the import's time budget. It keeps that decoder's
// rules: names match exactly, a repeated name is an error (the jsontext
// decoder checks it), null reads as the zero value, and a value of the wrong
// kind is handed to the reflective decoder so that the error, and so the
// message and path the client sees, are the same as everywhere else.
// codec.StreamArray calls it for JSON and for XML (which it converts to
// JSON) alike.
func (it *PromotionItem) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if dec.PeekKind() != '{' {
		return json.UnmarshalDecode(dec, (*PlainPromotionItem)(it))
	}
	return readObject(dec, func(name []byte) (err error) {
		switch string(name) {
		case "id":
			it.ID, err = readString(dec)
		case "name":
			it.Name, err = readString(dec)
		case "useForAllCategories":
			it.UseForAllCategories, err = readBool(dec)
		case "useForAllProducts":
			it.UseForAllProducts, err = readBool(dec)
		case "locationIds":
			it.LocationIDs, err = readStrings(dec)
		case "categoryIds":
			it.CategoryIDs, err = readStrings(dec)
		case "productIds":
			it.ProductIDs, err = readStrings(dec)
		case "promotionValidities":
			it.PromotionValidities, err = readArray(dec, it.PromotionValidities[:0], readValidity)
		case "promotionResults":
			it.PromotionResults, err = readArray(dec, it.PromotionResults[:0], readResult)
		case "priority":
			err = readOther(dec, &it.Priority)
		case "stackable":
			it.Stackable, err = readBool(dec)
		case "minQuantity":
			it.MinQuantity, err = readNumber(dec)
		case "minBasketAmount":
			it.MinBasketAmount, err = readNumber(dec)
		case "requiresCoupon":
			it.RequiresCoupon, err = readBool(dec)
		case "redemption":
			// Rare: the reflective decoder reads it, null as nil.
			it.Redemption = nil
			err = readOther(dec, &it.Redemption)
		default:
			err = dec.SkipValue()
		}
		return err
	})
}

// readObject reads the object dec is at, calling member for each name (the
// unquoted name; member must read the value).
func readObject(dec *jsontext.Decoder, member func(name []byte) error) error {
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	var buf []byte
	for dec.PeekKind() != '}' {
		raw, err := dec.ReadValue()
		if err != nil {
			return err
		}
		name := raw[1 : len(raw)-1]
		if bytes.IndexByte(name, '\\') >= 0 {
			if buf, err = jsontext.AppendUnquote(buf[:0], raw); err != nil {
				return err
			}
			name = buf
		}
		if err := member(name); err != nil {
			return err
		}
	}
	_, err := dec.ReadToken()
	return err
}

// readString reads a string (null: "").
func readString(dec *jsontext.Decoder) (string, error) {
	switch dec.PeekKind() {
	case '"':
		raw, err := dec.ReadValue()
		if err != nil {
			return "", err
		}
		if bytes.IndexByte(raw, '\\') < 0 {
			return string(raw[1 : len(raw)-1]), nil
		}
		b, err := jsontext.AppendUnquote(nil, raw)
		return string(b), err
	case 'n':
		_, err := dec.ReadValue()
		return "", err
	}
	var s string
	return "", json.UnmarshalDecode(dec, &s)
}

// readBool reads a boolean (null: false).
func readBool(dec *jsontext.Decoder) (bool, error) {
	switch dec.PeekKind() {
	case 't', 'f', 'n':
		tok, err := dec.ReadToken()
		return tok.Kind() == 't', err
	}
	var b bool
	return false, json.UnmarshalDecode(dec, &b)
}

// readStrings reads an array of strings (null: nil).
func readStrings(dec *jsontext.Decoder) ([]string, error) {
	return readArray(dec, nil, readString)
}

// readArray reads an array (null: nil) whose entries read reads, appending
// them to dst.
func readArray[T any](dec *jsontext.Decoder, dst []T, read func(*jsontext.Decoder) (T, error)) ([]T, error) {
	switch dec.PeekKind() {
	case '[':
	case 'n':
		_, err := dec.ReadValue()
		return nil, err
	default:
		var v []T
		return nil, json.UnmarshalDecode(dec, &v)
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, err
	}
	// The entries go to a buffer on the stack first (read returns values,
	// so nothing points into it), so that a short list, the usual, costs
	// one allocation of its exact size rather than one per doubling.
	var buf [8]T
	n := 0
	for dec.PeekKind() != ']' {
		if n == len(buf) {
			dst = append(dst, buf[:n]...)
			n = 0
		}
		v, err := read(dec)
		if err != nil {
			return nil, err
		}
		buf[n] = v
		n++
	}
	if dst == nil {
		dst = make([]T, 0, n)
	}
	dst = append(dst, buf[:n]...)
	_, err := dec.ReadToken()
	return dst, err
}

// readTime reads a date-time by codec's rules into *slot (null: nil),
// allocating the slot's array of four on first use: a validity's times
// share one allocation.
func readTime(dec *jsontext.Decoder, slab **[4]posgate.PromotionTime, i int) (*posgate.PromotionTime, error) {
	switch dec.PeekKind() {
	case '"':
	case 'n':
		_, err := dec.ReadValue()
		return nil, err
	default:
		var t posgate.PromotionTime
		return nil, readOther(dec, &t)
	}
	raw, err := dec.ReadValue()
	if err != nil {
		return nil, err
	}
	s := raw[1 : len(raw)-1]
	if bytes.IndexByte(s, '\\') >= 0 {
		if s, err = jsontext.AppendUnquote(nil, raw); err != nil {
			return nil, err
		}
	}
	t, err := posgate.ParsePromotionTime(string(s))
	if err != nil {
		return nil, &json.SemanticError{JSONPointer: dec.StackPointer(), JSONKind: '"', Err: errNotDateTime}
	}
	if *slab == nil {
		*slab = new([4]posgate.PromotionTime)
	}
	(*slab)[i] = t
	return &(*slab)[i], nil
}

// errNotDateTime is what a malformed date-time reports; codec turns any
// such error into the field's "must be a date-time" message.
var errNotDateTime = errors.New("not an ISO 8601 date-time")

// readValidity reads a validity object (null: the zero validity).
func readValidity(dec *jsontext.Decoder) (posgate.PromotionValidity, error) {
	var v posgate.PromotionValidity
	if dec.PeekKind() != '{' {
		return v, readOther(dec, &v)
	}
	var slab *[4]posgate.PromotionTime
	err := readObject(dec, func(name []byte) (err error) {
		switch string(name) {
		case "startDate":
			v.StartDate, err = readTime(dec, &slab, 0)
		case "endDate":
			v.EndDate, err = readTime(dec, &slab, 1)
		case "recurrence":
			switch dec.PeekKind() {
			case '{':
				v.Recurrence = &posgate.PromotionRecurrence{}
				err = readRecurrence(dec, v.Recurrence, &slab)
			default:
				v.Recurrence = nil
				err = readOther(dec, &v.Recurrence)
			}
		default:
			err = dec.SkipValue()
		}
		return err
	})
	return v, err
}

// readRecurrence reads a recurrence object; its times go in slots 2 and 3
// of the validity's slab.
func readRecurrence(dec *jsontext.Decoder, r *posgate.PromotionRecurrence, slab **[4]posgate.PromotionTime) error {
	return readObject(dec, func(name []byte) (err error) {
		switch string(name) {
		case "daysOfWeek":
			r.DaysOfWeek, err = readStrings(dec)
		case "startDate":
			r.StartDate, err = readTime(dec, slab, 2)
		case "endDate":
			r.EndDate, err = readTime(dec, slab, 3)
		default:
			err = dec.SkipValue()
		}
		return err
	})
}

// readResult reads a result object (null: the zero result).
func readResult(dec *jsontext.Decoder) (posgate.PromotionResult, error) {
	var r posgate.PromotionResult
	if dec.PeekKind() != '{' {
		return r, readOther(dec, &r)
	}
	err := readObject(dec, func(name []byte) (err error) {
		switch string(name) {
		case "promotionType":
			var s string
			s, err = readString(dec)
			r.PromotionType = posgate.PromotionType(s)
		case "value":
			r.Value, err = readNumber(dec)
		case "buyQuantity":
			err = readOther(dec, &r.BuyQuantity)
		case "getQuantity":
			err = readOther(dec, &r.GetQuantity)
		case "getProductIds":
			r.GetProductIDs, err = readStrings(dec)
		case "maxApplications":
			err = readOther(dec, &r.MaxApplications)
		default:
			err = dec.SkipValue()
		}
		return err
	})
	return r, err
}

// readNumber reads a number (null: 0).
func readNumber(dec *jsontext.Decoder) (float64, error) {
	if dec.PeekKind() != '0' {
		var f float64
		return f, readOther(dec, &f)
	}
	raw, err := dec.ReadValue()
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil { // out of range
		return 0, &json.SemanticError{JSONPointer: dec.StackPointer(), JSONKind: '0', Err: err}
	}
	return f, nil
}

// readOther reads a value that is not of the expected kind (or is null)
// with the reflective decoder, which leaves null as the zero value and
// reports anything else as every endpoint does.
func readOther[T any](dec *jsontext.Decoder, v *T) error {
	return json.UnmarshalDecode(dec, v)
}
