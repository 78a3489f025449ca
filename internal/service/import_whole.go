package service

import (
	"context"
	"errors"

	"github.com/posgate/posgate"
)

// The portal's uploads (docs/api.md §23) store a file whole or not at all:
// unlike the POS API, which stores the items that pass and reports the
// others, a person fixes the file and uploads it again. These commit only
// when no item failed; otherwise they store nothing and return the result
// with its errors (no counts) and false. Warnings do not stop a commit.

// CommitWhole commits the import only when no item failed.
func (imp *PromotionImport) CommitWhole(ctx context.Context) (*posgate.ImportResult, bool, error) {
	if r := imp.checker.Result(0, 0); len(r.Errors) > 0 {
		imp.Rollback()
		return r, false, nil
	}
	r, err := imp.Commit(ctx)
	return r, err == nil, err
}

// CommitWhole commits the import only when no item failed.
func (imp *ProductImport) CommitWhole(ctx context.Context) (*posgate.ImportResult, bool, error) {
	if r := imp.checker.Result(0, 0); len(r.Errors) > 0 {
		return r, false, nil
	}
	r, err := imp.Commit(ctx)
	return r, err == nil, err
}

// errTreeRefused ends the categories' transaction when the tree checks
// fail an item.
var errTreeRefused = errors.New("service: the categories' tree checks failed an item")

// CommitWhole commits the import only when no item failed, the tree
// checks included (they run in the store's transaction, which a failed
// item rolls back).
func (imp *CategoryImport) CommitWhole(ctx context.Context) (*posgate.ImportResult, bool, error) {
	if r := imp.checker.Result(0, 0); len(r.Errors) > 0 {
		return r, false, nil
	}
	if imp.checker.Pending() == 0 {
		return imp.checker.Result(0, 0), true, nil
	}
	created, updated, err := imp.svc.store.ImportCategories(importMeta(ctx, imp.who, imp.checker.Result(0, 0)), imp.posSystemID, imp.companyID, func(stored map[string]string) ([]*posgate.Category, error) {
		cats, err := imp.checker.Plan(stored)
		if err == nil && len(imp.checker.Result(0, 0).Errors) > 0 {
			return nil, errTreeRefused
		}
		return cats, err
	})
	if errors.Is(err, errTreeRefused) {
		return imp.checker.Result(0, 0), false, nil
	}
	if err != nil {
		return nil, false, err
	}
	imp.svc.indexes.invalidate(imp.posSystemID, imp.companyID)
	return imp.checker.Result(created, updated), true, nil
}
