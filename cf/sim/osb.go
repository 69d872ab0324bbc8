package sim

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// osbCall is one request about a service instance to its broker, as CC's
// v2 Client builds it: a JSON body for PUT and PATCH, the query for DELETE
// and GET.
type osbCall struct {
	method, path string
	query        url.Values
	body         any
}

// osbAnswer is what the broker answered.
type osbAnswer struct {
	status     int
	body       []byte
	retryAfter time.Duration // the Retry-After header, in seconds; 0 = none
}

// originatingIdentity is X-Broker-API-Originating-Identity for a user, as HttpClient encodes it.
func originatingIdentity(userID string) string {
	j, _ := json.Marshal(map[string]string{"user_id": userID})
	return "cloudfoundry " + base64.StdEncoding.EncodeToString(j)
}

// instanceCall sends call to the broker on behalf of userID; the error is
// the one CC's job records when the broker cannot be reached.
func (c *brokerClient) instanceCall(ctx context.Context, b Broker, userID string, call osbCall) (osbAnswer, *cfError) {
	u := strings.TrimSuffix(b.URL, "/") + call.path
	if len(call.query) > 0 {
		u += "?" + call.query.Encode() // sorted, as Hash#to_query
	}
	var body io.Reader
	if call.body != nil {
		j, err := json.Marshal(call.body)
		if err != nil {
			return osbAnswer{}, &errBrokerUnreachable
		}
		body = bytes.NewReader(j)
	}
	req, err := http.NewRequestWithContext(ctx, call.method, u, body)
	if err != nil {
		return osbAnswer{}, &errBrokerUnreachable
	}
	c.prepare(req, b)
	req.Header.Set("X-Broker-API-Originating-Identity", originatingIdentity(userID))
	if call.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.http.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
			return osbAnswer{}, &errBrokerTimeout
		}
		return osbAnswer{}, &errBrokerUnreachable
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxCatalogBytes+1))
	if err != nil || len(raw) > maxCatalogBytes {
		return osbAnswer{}, &errBrokerUnreachable
	}
	a := osbAnswer{status: res.StatusCode, body: raw}
	if s, err := strconv.Atoi(res.Header.Get("Retry-After")); err == nil && s > 0 {
		a.retryAfter = time.Duration(s) * time.Second
	}
	return a, nil
}

// osbState is the part of a broker's answer CC reads: operation (from a
// 202), state and description (from last_operation).
type osbState struct {
	Operation   string `json:"operation"`
	State       string `json:"state"`
	Description string `json:"description"`
}

// answerError maps a broker's failing status as CC's response parser does
// for instance operations: 401, 408, other 4xx (409, 410, 422 and 5xx a bad
// response), a body not a JSON object for a success.
func answerError(a osbAnswer) *cfError {
	switch code := a.status; {
	case code == http.StatusUnauthorized:
		return &errBrokerAuthFailed
	case code == http.StatusRequestTimeout:
		return &errBrokerTimeout
	case code == http.StatusConflict || code == http.StatusGone || code == http.StatusUnprocessableEntity || code >= 500:
		e := brokerBadResponse(code, a.body)
		return &e
	case code >= 400:
		e := brokerRejected(strconv.Itoa(code) + " " + http.StatusText(code))
		return &e
	}
	var object map[string]json.RawMessage
	if json.Unmarshal(a.body, &object) != nil || object == nil {
		return &errBrokerMalformed
	}
	return nil
}

// readState is the broker's answer's operation, state and description.
func readState(a osbAnswer) osbState {
	var s osbState
	_ = json.Unmarshal(a.body, &s) // checked by answerError
	return s
}
