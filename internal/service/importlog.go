package service

import (
	"context"

	"github.com/posgate/posgate"
)

// MaxImportLogSize caps ListImports' limit.
const MaxImportLogSize = 100

// ListImports returns the newest finished imports (at most limit, 1 to
// MaxImportLogSize) of a POS system that p reaches whole companies of: a
// principal restricted to companies sees theirs; a location manager sees
// none, imports being company-wide (as the portal's failing webhooks
// panel reaches only whole companies). A POS system p does not reach has
// none.
func (s *Service) ListImports(ctx context.Context, p *posgate.Principal, posSystemID string, limit int) ([]*posgate.ImportRecord, error) {
	if err := s.AuthorizeOperator(p); err != nil {
		return nil, err
	}
	if limit < 1 || limit > MaxImportLogSize {
		return nil, posgate.Errorf(posgate.EINVALID, "The limit must be from 1 to %d.", MaxImportLogSize)
	}
	if !p.CanSeePOSSystem(posSystemID) || len(p.LocationIDs) > 0 {
		return []*posgate.ImportRecord{}, nil
	}
	list, err := s.store.ListImports(ctx, posSystemID, p.CompanyIDs, limit)
	return nonNil(list), err
}
