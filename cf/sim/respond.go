package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/blacksmith-reconciler/blacksmith/internal/simkit"
)

// cfError is one error of the Cloud Controller's v3 error object.
type cfError struct {
	Code   int    `json:"code"`
	Title  string `json:"title"`
	Detail string `json:"detail"`
}

// Cloud Controller errors the simulator answers, as errors/v2.yml defines
// them (code, name, HTTP status, message).
var (
	errInvalidAuthToken  = cfError{1000, "CF-InvalidAuthToken", "Invalid Auth Token"}
	errNotFound          = cfError{10000, "CF-NotFound", "Unknown request"}
	errNotAuthenticated  = cfError{10002, "CF-NotAuthenticated", "Authentication error"}
	errRateLimitExceeded = cfError{10013, "CF-RateLimitExceeded", "Rate Limit Exceeded"}
	errUnknown           = cfError{10001, "UnknownError", "An unknown error occurred."}
	errUnavailable       = cfError{10015, "CF-ServiceUnavailable", "Database connection failure"}
)

func badQuery(detail string) cfError {
	return cfError{10005, "CF-BadQueryParameter", "The query parameter is invalid: " + detail}
}

func resourceNotFound(what string) cfError {
	return cfError{10010, "CF-ResourceNotFound", what + " not found"}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	simkit.Write(w, status, "application/json; charset=utf-8", simkit.JSON(v))
}

// writeError answers the v3 error object {"errors":[{code,title,detail}]}.
func writeError(w http.ResponseWriter, status int, e cfError) {
	writeJSON(w, status, map[string][]cfError{"errors": {e}})
}

// Errors a broker's catalog fetch ends in (errors/v2.yml, and CC's
// services errors, which V3ErrorHasher presents with code 10001 and
// title CF-<class>).
var (
	errBrokerMalformed = cfError{270021, "CF-ServiceBrokerRequestMalformed",
		"The service broker returned an invalid response: expected valid JSON object in body. Please check that the URL points to a valid service broker."}
	errBrokerAuthFailed = cfError{10001, "CF-ServiceBrokerApiAuthenticationFailed",
		"Authentication with the service broker failed. Double-check that the username and password are correct."}
	errBrokerTimeout     = cfError{10001, "CF-ServiceBrokerApiTimeout", "The request to the service broker timed out"}
	errBrokerUnreachable = cfError{10001, "CF-ServiceBrokerApiUnreachable", "The service broker could not be reached"}
)

func brokerRejected(status string) cfError {
	return cfError{270020, "CF-ServiceBrokerRequestRejected", "The service broker rejected the request. Status Code: " +
		status + ". Please check that the URL points to a valid service broker."}
}

func brokerBadResponse(status int, body []byte) cfError {
	var desc struct {
		Description *string `json:"description"`
	}
	detail := fmt.Sprintf("The service broker returned an invalid response. Status Code: %d %s, Body: %s", status, http.StatusText(status), body)
	if json.Unmarshal(body, &desc) == nil && desc.Description != nil {
		detail = "Service broker error: " + *desc.Description
	}
	if len(detail) > 1<<14 {
		detail = detail[:1<<13] + "...This message has been truncated due to size. To read the full message, check the broker's logs"
	}
	return cfError{10001, "CF-ServiceBrokerBadResponse", detail}
}

func catalogInvalid(problems []string) cfError {
	return cfError{270012, "CF-ServiceBrokerCatalogInvalid", "Service broker catalog is invalid: " + strings.Join(problems, "\n")}
}

func unprocessable(messages []string) cfError {
	return cfError{10008, "CF-UnprocessableEntity", strings.Join(messages, ", ")}
}
