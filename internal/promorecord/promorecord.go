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
// where a string is a uvarint length and the bytes, and strings a uvarint
// count and that many strings. A later version adds a new number and keeps
// decoding the old ones.
//
// Version 2 is version 1 with one more byte after each validity's presence
// byte: which of the times present are wall-clock times
// (posgate.PromotionTime.IsWall), with the same bits (such a time is kept as
// its date and clock read as UTC); after each result's value:
//
//	uvarint  buyQuantity, getQuantity
//	strings  getProductIds
//	uvarint  maxApplications
//
// and, at the end of the record:
//
//	byte     flags: 1 stackable, 2 requiresCoupon, 4 priority,
//	         8 minQuantity, 16 minBasketAmount
//	varint   priority (if flagged)
//	8 bytes  minQuantity, then minBasketAmount (each if flagged)
//
// then optional sections, each a tag byte and its content:
//
//	tag 1, the budget: byte presence (1 quantity, 2 perCustomer), then a
//	uvarint for each present, in that order
const version = 2

// sectionBudget tags the optional budget section, which only a promotion
// with a budget has.
const sectionBudget = 1

const (
	extStackable = 1 << iota
	extRequiresCoupon
	extPriority
	extMinQuantity
	extMinBasketAmount
)

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
		times := [4]*posgate.PromotionTime{v.StartDate, v.EndDate}
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
		var wall byte
		for n, t := range times {
			if t != nil && t.IsWall() {
				wall |= timeBits[n]
			}
		}
		dst = append(dst, has, wall)
		for _, t := range times {
			if t != nil {
				dst = binary.AppendVarint(dst, t.Time().UnixMicro())
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
		dst = binary.AppendUvarint(dst, uint64(r.BuyQuantity))
		dst = binary.AppendUvarint(dst, uint64(r.GetQuantity))
		dst = appendStrings(dst, r.GetProductIDs)
		dst = binary.AppendUvarint(dst, uint64(r.MaxApplications))
	}
	var ext byte
	if p.Stackable {
		ext |= extStackable
	}
	if p.RequiresCoupon {
		ext |= extRequiresCoupon
	}
	if p.Priority != 0 {
		ext |= extPriority
	}
	if p.MinQuantity != 0 {
		ext |= extMinQuantity
	}
	if p.MinBasketAmount != 0 {
		ext |= extMinBasketAmount
	}
	dst = append(dst, ext)
	if p.Priority != 0 {
		dst = binary.AppendVarint(dst, int64(p.Priority))
	}
	if p.MinQuantity != 0 {
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(p.MinQuantity))
	}
	if p.MinBasketAmount != 0 {
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(p.MinBasketAmount))
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

// timeBits are the presence bits of a validity's four times, in order.
var timeBits = [4]byte{hasStart, hasEnd, hasRecurrenceStart, hasRecurrenceEnd}

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

func (r *recordReader) float() float64 {
	if r.err == nil && len(r.b) < 8 {
		r.err = errRecord
	}
	if r.err != nil {
		return 0
	}
	f := math.Float64frombits(binary.LittleEndian.Uint64(r.b))
	r.b = r.b[8:]
	return f
}

// int reads a uvarint that must fit in an int32 (the record's counts).
func (r *recordReader) int() int {
	v := r.uvarint()
	if v > math.MaxInt32 {
		r.err = errRecord
		return 0
	}
	return int(v)
}

// time reads a time; wall says whether it is a wall-clock time.
func (r *recordReader) time(wall bool) *posgate.PromotionTime {
	t := time.UnixMicro(r.varint()).UTC()
	p := posgate.InstantTime(t)
	if wall {
		p = posgate.WallTime(t)
	}
	return &p
}

// Decode reads a record into p's fields other than its keys and times.
func Decode(b []byte, p *posgate.Promotion) error {
	r := &recordReader{b: b}
	ver := r.byte()
	if r.err == nil && ver != 1 && ver != version {
		return fmt.Errorf("promotion record version %d: written by a newer posgate?", ver)
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
		var wall byte
		if ver > 1 {
			wall = r.byte()
		}
		if has&hasStart != 0 {
			v.StartDate = r.time(wall&hasStart != 0)
		}
		if has&hasEnd != 0 {
			v.EndDate = r.time(wall&hasEnd != 0)
		}
		if has&hasRecurrence != 0 {
			rec := &posgate.PromotionRecurrence{DaysOfWeek: []string{}}
			if has&hasRecurrenceStart != 0 {
				rec.StartDate = r.time(wall&hasRecurrenceStart != 0)
			}
			if has&hasRecurrenceEnd != 0 {
				rec.EndDate = r.time(wall&hasRecurrenceEnd != 0)
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
		res := &p.Results[i]
		res.PromotionType = posgate.PromotionType(r.string())
		res.Value = r.float()
		if ver == 1 {
			res.GetProductIDs = []string{}
			continue
		}
		res.BuyQuantity, res.GetQuantity = r.int(), r.int()
		res.GetProductIDs = r.strings()
		res.MaxApplications = r.int()
	}
	p.Priority, p.Stackable, p.RequiresCoupon, p.MinQuantity, p.MinBasketAmount = 0, false, false, 0, 0
	p.Redemption = nil
	if ver > 1 {
		ext := r.byte()
		p.Stackable = ext&extStackable != 0
		p.RequiresCoupon = ext&extRequiresCoupon != 0
		if ext&extPriority != 0 {
			p.Priority = int(r.varint())
		}
		if ext&extMinQuantity != 0 {
			p.MinQuantity = r.float()
		}
		if ext&extMinBasketAmount != 0 {
			p.MinBasketAmount = r.float()
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
	if v := r.byte(); r.err == nil && v != 1 && v != version {
		return nil, fmt.Errorf("promotion record version %d: written by a newer posgate?", v)
	}
	r.byte()
	r.string()
	ids := r.strings()
	return ids, r.err
}
