package posgate

import (
	"slices"
	"testing"
)

func TestSignTransaction(t *testing.T) {
	for _, tc := range []struct {
		typ      TransactionType
		amount   Amount
		wantType TransactionType
		want     Amount
	}{
		{"", 1250, TransactionUndefined, 1250},
		{TransactionSale, 1250, TransactionSale, 1250},
		{TransactionUndefined, 0, TransactionUndefined, 0},
		{TransactionRefund, 1250, TransactionRefund, -1250}, // the refunded amount, sent positive
		{TransactionRefund, -1250, TransactionRefund, -1250},
		{"", -1250, TransactionRefund, -1250}, // a negative amount is a refund
		{TransactionSale, -1250, TransactionRefund, -1250},
	} {
		typ, amount := SignTransaction(tc.typ, tc.amount)
		if typ != tc.wantType || amount != tc.want {
			t.Errorf("SignTransaction(%q, %s) = %q, %s; want %q, %s", tc.typ, tc.amount, typ, amount, tc.wantType, tc.want)
		}
	}
}

func TestDedupe(t *testing.T) {
	many := make([]string, 40)
	for i := range many {
		many[i] = string(rune('a' + i%20))
	}
	for _, tc := range []struct{ in, want []string }{
		{nil, []string{}},
		{[]string{"a", "b"}, []string{"a", "b"}},
		{[]string{"b", "a", "b", "c", "a"}, []string{"b", "a", "c"}},
		{many, many[:20]},
	} {
		got := Dedupe(slices.Clone(tc.in))
		if got == nil || !slices.Equal(got, tc.want) {
			t.Errorf("Dedupe(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
