package httpapi

import (
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/posgate/posgate/internal/service"
)

// Transactions (docs/api.md §13): the POS's sale and refund, the offline
// replay, the coupon validated by transaction, and their operator routes.

// transactionBatchBodyBytes caps the offline replay's body: 1,000
// transactions of a few products each.
const transactionBatchBodyBytes = 8 << 20

// batchBody reads the offline replay's body, JSON or XML, with its own cap.
var batchBody = bodyOpts{limit: transactionBatchBodyBytes}

// withHeader is an answer with header fields of its own (writeJSON sets
// them before the status).
type withHeader struct {
	header http.Header
	body   any
}

// transactionAnswer answers a recorded transaction's data, with
// Idempotent-Replayed: true when it is the first answer of the same
// request again (docs/api.md §13.7); status is the answer's for a new one.
func transactionAnswer(status int, out *service.TransactionResult, err error) (int, any, error) {
	if err != nil {
		return 0, nil, err
	}
	answer := envelope{json.RawMessage(out.Data)}
	if !out.Replayed {
		return status, answer, nil
	}
	return http.StatusOK, withHeader{header: http.Header{"Idempotent-Replayed": {"true"}}, body: answer}, nil
}

// recordTransaction records a sale or refund (docs/api.md §13.1).
func (s *Server) recordTransaction(r *http.Request, req *service.TransactionRequest) (int, any, error) {
	out, err := s.svc.RecordTransaction(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), req)
	return transactionAnswer(http.StatusOK, out, err)
}

// recordTransactionBatch replays transactions recorded offline
// (docs/api.md §13.6).
func (s *Server) recordTransactionBatch(r *http.Request, req *service.TransactionBatchRequest) (int, any, error) {
	// A large batch takes a moment: say what it is waiting for.
	s.log.InfoContext(r.Context(), "transaction batch: applying", slog.String("traceId", traceID(r.Context())), slog.Int("items", len(req.Items)))
	return enveloped(s.svc.RecordTransactionBatch(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), req))
}

// validateCouponByTransaction redeems a coupon for a recorded transaction
// (docs/api.md §13.5); posStatus stands beside data.
func (s *Server) validateCouponByTransaction(r *http.Request, req *service.ValidateByTransactionRequest) (int, any, error) {
	return plain(s.svc.ValidateCouponByTransaction(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), req))
}

func (s *Server) getLoyaltyProgram(r *http.Request) (int, any, error) {
	return enveloped(s.svc.FindLoyaltyProgram(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posCompanyId")))
}

func (s *Server) putLoyaltyProgram(r *http.Request, req *service.PutLoyaltyProgramRequest) (int, any, error) {
	return enveloped(s.svc.PutLoyaltyProgram(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), req))
}

// listTransactions pages a company's transactions; filters and paging
// come from the query.
func (s *Server) listTransactions(r *http.Request) (int, any, error) {
	q := r.URL.Query()
	req := &service.ListTransactionsRequest{PosLocationID: q.Get("posLocationId"), UserID: q.Get("userId"), Day: q.Get("day"),
		Page: queryNumber(q, "page"), PageSize: queryNumber(q, "pageSize")}
	return enveloped(s.svc.ListTransactions(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), req))
}

func (s *Server) getTransaction(r *http.Request) (int, any, error) {
	return enveloped(s.svc.FindTransaction(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), r.PathValue("transactionId")))
}

// refundTransaction refunds a sale for an operator: 201 with the refund's
// data, or 200 with Idempotent-Replayed when the same refund was made.
func (s *Server) refundTransaction(r *http.Request, req *service.OperatorRefundRequest) (int, any, error) {
	out, err := s.svc.RefundTransaction(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), r.PathValue("transactionId"), req)
	return transactionAnswer(http.StatusCreated, out, err)
}
