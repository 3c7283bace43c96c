package analytics

import "time"

// backoffDelay is the wait before retry number retry (0 for the first retry): exponential,
// min × 2^retry capped at max, with "equal jitter" — a uniformly random point in the upper half
// of that span, so clients that failed together spread out but never retry sooner than half
// the nominal delay. random returns a number in [0, 1).
func backoffDelay(retry int, min, max time.Duration, random func() float64) time.Duration {
	if retry > 30 {
		retry = 30
	}
	nominal := min << uint(retry)
	if nominal > max || nominal < min { // the shift can overflow
		nominal = max
	}
	half := nominal / 2
	return half + time.Duration(random()*float64(nominal-half))
}
