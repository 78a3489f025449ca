package posgate

import (
	"errors"
	"strconv"
	"strings"
)

// Amount is a number with two decimals kept as an integer count of
// hundredths: money in minor units (docs/api.md §13.3), and the loyalty
// program's rate. It is never a float, so that 0.1 + 0.2 is 0.30 and a
// ledger adds up to the cent.
//
// It reads a JSON number exactly as written, without passing it through
// float64: "12.345" is 1234 hundredths (half-even), "1e3" is 100000. A
// number whose magnitude is far beyond MaxAmount reads as ±amountSaturated,
// which every range check refuses, so that a request with 1e400 gets the
// field's range message rather than a parse error.
type Amount int64

// Limits of amounts (docs/api.md §13.3).
const (
	// MaxAmount is the largest magnitude of a transaction amount: 1e9
	// currency units, in hundredths.
	MaxAmount Amount = 1_000_000_000 * 100
	// amountSaturated is what a number too large to hold reads as.
	amountSaturated Amount = 1_000_000_000_000_000
)

// errNotNumber is returned for a JSON value that is not a number; the codec
// reports the field as "must be a number".
var errNotNumber = errors.New("not a JSON number")

// ErrAmountRoundsToZero is returned for a number that is not 0 but rounds
// to 0.00 (0.004, -0.001): read as 0 it would change what was meant (a
// refund of -0.001 would become a sale), so it is refused; the codec
// reports the field with its own message (docs/api.md §13.3).
var ErrAmountRoundsToZero = errors.New("a non-zero amount rounds to 0.00")

// JSONNumber marks Amount as a JSON number for the request decoder
// (internal/codec), whatever its Go kind, so that XML text is read as a
// number and a wrong type is reported as "must be a number".
func (Amount) JSONNumber() {}

// UnmarshalJSON reads a JSON number exactly (see Amount).
func (a *Amount) UnmarshalJSON(b []byte) error {
	v, err := ParseAmount(string(b))
	if err != nil {
		return err
	}
	*a = v
	return nil
}

// MarshalJSON writes the amount as a JSON number with two decimals.
func (a Amount) MarshalJSON() ([]byte, error) { return []byte(a.String()), nil }

// String renders the amount with two decimals: "-12.30".
func (a Amount) String() string {
	neg := a < 0
	u := uint64(a)
	if neg {
		u = uint64(-a)
	}
	s := strconv.FormatUint(u/100, 10) + "." + strconv.FormatUint(u%100/10, 10) + strconv.FormatUint(u%10, 10)
	if neg {
		return "-" + s
	}
	return s
}

// Abs is the amount's magnitude.
func (a Amount) Abs() Amount {
	if a < 0 {
		return -a
	}
	return a
}

// ParseAmount reads a JSON number (RFC 8259 grammar) as hundredths, rounded
// half to even at the third decimal, exactly. Anything that is not a JSON
// number is an error, and so is a number other than 0 that rounds to 0
// (ErrAmountRoundsToZero); a number far beyond MaxAmount saturates (see
// Amount).
func ParseAmount(s string) (Amount, error) {
	i, neg := 0, false
	if i < len(s) && s[i] == '-' {
		neg, i = true, i+1
	}
	start := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	intPart := s[start:i]
	if intPart == "" || (len(intPart) > 1 && intPart[0] == '0') {
		return 0, errNotNumber
	}
	var frac string
	if i < len(s) && s[i] == '.' {
		i++
		fs := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if frac = s[fs:i]; frac == "" {
			return 0, errNotNumber
		}
	}
	exp := 0
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg, i = s[i] == '-', i+1
		}
		es := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			if exp < 100_000 { // beyond, the value is 0 or saturated anyway
				exp = exp*10 + int(s[i]-'0')
			}
			i++
		}
		if i == es {
			return 0, errNotNumber
		}
		if eneg {
			exp = -exp
		}
	}
	if i != len(s) {
		return 0, errNotNumber
	}
	// value = digits × 10^shift hundredths.
	digits := strings.TrimLeft(intPart+frac, "0")
	shift := exp - len(frac) + 2
	if digits == "" {
		return 0, nil
	}
	var v Amount
	switch {
	case len(digits)+shift > 16:
		v = amountSaturated
	case shift >= 0:
		n, _ := strconv.ParseInt(digits+strings.Repeat("0", shift), 10, 64)
		v = min(Amount(n), amountSaturated)
	default:
		cut := len(digits) + shift // digits kept before the rounding point
		var kept, rest string
		if cut > 0 {
			kept, rest = digits[:cut], digits[cut:]
		} else {
			rest = strings.Repeat("0", -cut) + digits
		}
		n := int64(0)
		if kept != "" {
			n, _ = strconv.ParseInt(kept, 10, 64)
		}
		switch {
		case rest[0] > '5', rest[0] == '5' && strings.TrimRight(rest[1:], "0") != "":
			n++
		case rest[0] == '5' && n%2 == 1: // a tie: to even
			n++
		}
		v = Amount(n)
	}
	if v == 0 {
		return 0, ErrAmountRoundsToZero
	}
	if neg {
		v = -v
	}
	return v, nil
}
