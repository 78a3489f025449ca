// Package promorecord is the compact binary record both stores keep a
// promotion's fields in (those that no query filters on): an import of
// 100,000 promotions then writes one small value per promotion instead of a
// dozen values or a JSON document several times its size, and a database's
// cost per row grows with the row's size.
package promorecord

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/posgate/posgate"
)

// The layout, version 1 (about a third of the size of the same promotion as
// JSON):
//
//	byte     version (1)
//	byte     flags: 1 useForAllCategories, 2 useForAllProducts
//	string   name
//	strings  locationIds, categoryIds, productIds
//	uvarint  number of validities, then for each:
//	         byte  presence: 1 startDate, 2 endDate, 4 recurrence,
//	                         8 recurrence startDate, 16 recurrence endDate
//	         varint times present, in that order, as Unix microseconds (UTC)
//	         byte  recurrence days, bit d for time.Weekday d (if recurrence)
//	uvarint  number of results, then for each: string promotionType,
//	         8 bytes IEEE 754 value (little endian)
//
//	optional sections, each a tag byte and its content:
//	         tag 1, the budget: byte presence (1 quantity, 2 perCustomer),
//	         then a uvarint for each present, in that order
//
// where a string is a uvarint length and the bytes, and strings a uvarint
// count and that many strings. A later version adds a new number and keeps
// decoding the old ones.
const version = 1

const (
	flagAllCategories = 1 << iota
	flagAllProducts
)

const (
	hasStart = 1 << iota
	hasEnd
	hasRecurrence
	hasRecurrenceStart
	hasRecurrenceEnd
)

// Append appends p's record to dst.
func Append(dst []byte, p *posgate.Promotion) []byte {
	var flags byte
	if p.UseForAllCategories {
		flags |= flagAllCategories
	}
	if p.UseForAllProducts {
		flags |= flagAllProducts
	}
	dst = append(dst, version, flags)
	dst = appendString(dst, p.Name)
	dst = appendStrings(dst, p.LocationIDs)
	dst = appendStrings(dst, p.CategoryIDs)
	dst = appendStrings(dst, p.ProductIDs)
	dst = binary.AppendUvarint(dst, uint64(len(p.Validities)))
	for i := range p.Validities {
		v := &p.Validities[i]
		var has byte
		times := [4]*time.Time{v.StartDate, v.EndDate}
		if v.StartDate != nil {
			has |= hasStart
		}
		if v.EndDate != nil {
			has |= hasEnd
		}
		var days byte
		if r := v.Recurrence; r != nil {
			has |= hasRecurrence
			if r.StartDate != nil {
				has |= hasRecurrenceStart
			}
			if r.EndDate != nil {
				has |= hasRecurrenceEnd
			}
			times[2], times[3] = r.StartDate, r.EndDate
			for _, d := range r.DaysOfWeek {
				for n, name := range posgate.DayNames {
					if d == name {
						days |= 1 << n
					}
				}
			}
		}
		dst = append(dst, has)
		for _, t := range times {
			if t != nil {
				dst = binary.AppendVarint(dst, t.UnixMicro())
			}
		}
		if has&hasRecurrence != 0 {
			dst = append(dst, days)
		}
	}
	dst = binary.AppendUvarint(dst, uint64(len(p.Results)))
	for _, r := range p.Results {
		dst = appendString(dst, string(r.PromotionType))
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(r.Value))
	}
	if b := p.Redemption; b != nil {
		var has byte
		if b.Quantity != nil {
			has |= 1
		}
		if b.PerCustomer != nil {
			has |= 2
		}
		dst = append(dst, sectionBudget, has)
		for _, v := range []*int64{b.Quantity, b.PerCustomer} {
			if v != nil {
				dst = binary.AppendUvarint(dst, uint64(*v))
			}
		}
	}
	return dst
}

// sectionBudget tags the optional budget section, which only a promotion
// with a budget has: the records of the others are as before it existed.
const sectionBudget = 1

func appendString(dst []byte, s string) []byte {
	return append(binary.AppendUvarint(dst, uint64(len(s))), s...)
}

func appendStrings(dst []byte, ss []string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(ss)))
	for _, s := range ss {
		dst = appendString(dst, s)
	}
	return dst
}

// errRecord reports a record this binary cannot read.
var errRecord = errors.New("malformed promotion record")

// recordReader reads a record; the first failure sticks, so that callers
// check once at the end.
type recordReader struct {
	b   []byte
	err error
}

func (r *recordReader) byte() byte {
	if r.err != nil || len(r.b) < 1 {
		r.err = errRecord
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *recordReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errRecord
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *recordReader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = errRecord
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a length that must fit in what is left of the record (each
// entry takes at least one byte), so that a corrupt length cannot make a
// huge allocation.
func (r *recordReader) count() int {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.err = errRecord
		return 0
	}
	return int(n)
}

func (r *recordReader) string() string {
	n := r.count()
	if r.err != nil {
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *recordReader) strings() []string {
	n := r.count()
	out := make([]string, 0, n)
	for range n {
		out = append(out, r.string())
	}
	return out
}

func (r *recordReader) time() *time.Time {
	t := time.UnixMicro(r.varint()).UTC()
	return &t
}

// Decode reads a record into p's fields other than its keys and times.
func Decode(b []byte, p *posgate.Promotion) error {
	r := &recordReader{b: b}
	if v := r.byte(); r.err == nil && v != version {
		return fmt.Errorf("promotion record version %d: written by a newer posgate?", v)
	}
	flags := r.byte()
	p.UseForAllCategories = flags&flagAllCategories != 0
	p.UseForAllProducts = flags&flagAllProducts != 0
	p.Name = r.string()
	p.LocationIDs = r.strings()
	p.CategoryIDs = r.strings()
	p.ProductIDs = r.strings()
	p.Validities = make([]posgate.PromotionValidity, r.count())
	for i := range p.Validities {
		v := &p.Validities[i]
		has := r.byte()
		if has&hasStart != 0 {
			v.StartDate = r.time()
		}
		if has&hasEnd != 0 {
			v.EndDate = r.time()
		}
		if has&hasRecurrence != 0 {
			rec := &posgate.PromotionRecurrence{DaysOfWeek: []string{}}
			if has&hasRecurrenceStart != 0 {
				rec.StartDate = r.time()
			}
			if has&hasRecurrenceEnd != 0 {
				rec.EndDate = r.time()
			}
			days := r.byte()
			for d, name := range posgate.DayNames {
				if days&(1<<d) != 0 {
					rec.DaysOfWeek = append(rec.DaysOfWeek, name)
				}
			}
			v.Recurrence = rec
		}
	}
	p.Results = make([]posgate.PromotionResult, r.count())
	for i := range p.Results {
		p.Results[i].PromotionType = posgate.PromotionType(r.string())
		if r.err == nil && len(r.b) < 8 {
			r.err = errRecord
		}
		if r.err == nil {
			p.Results[i].Value = math.Float64frombits(binary.LittleEndian.Uint64(r.b))
			r.b = r.b[8:]
		}
	}
	for r.err == nil && len(r.b) > 0 {
		switch r.byte() {
		case sectionBudget:
			b := &posgate.PromotionRedemption{}
			has := r.byte()
			if has&1 != 0 {
				v := int64(r.uvarint())
				b.Quantity = &v
			}
			if has&2 != 0 {
				v := int64(r.uvarint())
				b.PerCustomer = &v
			}
			p.Redemption = b
		default:
			r.err = errRecord
		}
	}
	return r.err
}

// Locations reads only the location ids of a record, for an import that
// replaces the promotion.
func Locations(b []byte) ([]string, error) {
	r := &recordReader{b: b}
	if v := r.byte(); r.err == nil && v != version {
		return nil, fmt.Errorf("promotion record version %d: written by a newer posgate?", v)
	}
	r.byte()
	r.string()
	ids := r.strings()
	return ids, r.err
}
