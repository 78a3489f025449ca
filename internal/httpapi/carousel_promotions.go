package httpapi

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/posgate/posgate"
)

// promotionSlideSeconds is how long a promotion stays on screen; operator
// slides carry their own duration.
const promotionSlideSeconds = 8

// PromotionSlides is the SlideSource of a store's imported promotions: the
// company's promotions valid at the location now (PromotionStore's
// ListPromotionsValidAt), one text slide each, after the operator's slides.
func PromotionSlides(st posgate.PromotionStore) SlideSource {
	return func(ctx context.Context, posSystemID, companyID, locationID string, at time.Time) ([]CarouselSlide, error) {
		ps, err := st.ListPromotionsValidAt(ctx, posSystemID, companyID, locationID, at)
		if err != nil {
			return nil, err
		}
		out := make([]CarouselSlide, len(ps))
		for i, p := range ps {
			out[i] = CarouselSlide{
				SlideID:         "promotion:" + p.ID,
				Title:           p.Name,
				Text:            promotionText(p.Results),
				DurationSeconds: promotionSlideSeconds,
			}
		}
		return out, nil
	}
}

// promotionText says what a promotion gives, e.g. "10% off" or "5.00 off".
func promotionText(results []posgate.PromotionResult) string {
	parts := make([]string, 0, len(results))
	for _, r := range results {
		v := strconv.FormatFloat(r.Value, 'f', -1, 64)
		if r.PromotionType == posgate.PromotionPercentage {
			parts = append(parts, v+"% off")
		} else {
			parts = append(parts, strconv.FormatFloat(r.Value, 'f', 2, 64)+" off")
		}
	}
	return strings.Join(parts, ", ")
}
