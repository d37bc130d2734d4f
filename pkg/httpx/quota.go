package httpx

import "net/http"

// CodeQuotaExceeded says that a caller reached the configured quota of a resource it creates:
// retrying does not help until something is removed or the quota raised.
const CodeQuotaExceeded = "QUOTA_EXCEEDED"

// QuotaExceeded is the 409 QUOTA_EXCEEDED naming the quota: what is counted and its maximum.
func QuotaExceeded(what string, max int64) *Error {
	return Errorf(http.StatusConflict, CodeQuotaExceeded, "quota reached: at most %d %s", max, what)
}
