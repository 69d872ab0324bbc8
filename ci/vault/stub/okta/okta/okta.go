// Package okta stands in for the Okta SDK in this development build of
// Vault. Vault's core uses it only for Okta push MFA at login, which the
// dev server this build makes never configures; the SDK is a fifth of the
// source a Vault build compiles. Here a client cannot be made: the
// configuration answers ErrNotBuilt, and the calls Vault makes, were they
// reached, answer it too.
package okta

import (
	"context"
	"errors"
	"net/http"
)

// ErrNotBuilt is what every call answers.
var ErrNotBuilt = errors.New("Okta MFA is not part of this development build of Vault")

// Configuration is a client's configuration.
type Configuration struct{ Context context.Context }

// ConfigSetter sets a configuration field.
type ConfigSetter func(*Configuration)

// WithToken is accepted.
func WithToken(string) ConfigSetter { return func(*Configuration) {} }

// WithOrgUrl is accepted.
func WithOrgUrl(string) ConfigSetter { return func(*Configuration) {} }

// WithCache is accepted.
func WithCache(bool) ConfigSetter { return func(*Configuration) {} }

// NewConfiguration answers ErrNotBuilt.
func NewConfiguration(...ConfigSetter) (*Configuration, error) { return nil, ErrNotBuilt }

// APIResponse is an HTTP answer.
type APIResponse struct{ *http.Response }

// APIClient is a client whose every call answers ErrNotBuilt.
type APIClient struct {
	cfg           *Configuration
	UserAPI       *UserAPIService
	UserFactorAPI *UserFactorAPIService
}

// NewAPIClient returns a client.
func NewAPIClient(cfg *Configuration) *APIClient {
	return &APIClient{cfg: cfg, UserAPI: &UserAPIService{}, UserFactorAPI: &UserFactorAPIService{}}
}

// GetConfig returns the client's configuration.
func (c *APIClient) GetConfig() *Configuration {
	if c.cfg == nil {
		return &Configuration{Context: context.Background()}
	}
	return c.cfg
}

// User is an Okta user.
type User struct{ Id *string }

// GetId returns the user's id.
func (u *User) GetId() string {
	if u == nil || u.Id == nil {
		return ""
	}
	return *u.Id
}

// UserAPIService lists users.
type UserAPIService struct{}

// ApiListUsersRequest is a request to list users.
type ApiListUsersRequest struct{}

// ListUsers returns a request.
func (*UserAPIService) ListUsers(context.Context) ApiListUsersRequest { return ApiListUsersRequest{} }

// Filter is accepted.
func (r ApiListUsersRequest) Filter(string) ApiListUsersRequest { return r }

// Execute answers ErrNotBuilt.
func (ApiListUsersRequest) Execute() ([]User, *APIResponse, error) { return nil, nil, ErrNotBuilt }

// UserFactorPush is a push factor.
type UserFactorPush struct{ Id *string }

// GetId returns the factor's id.
func (f *UserFactorPush) GetId() string {
	if f == nil || f.Id == nil {
		return ""
	}
	return *f.Id
}

// ListFactors200ResponseInner is one factor.
type ListFactors200ResponseInner struct{ UserFactorPush *UserFactorPush }

// UserFactorVerifyResponse is a factor's verification.
type UserFactorVerifyResponse struct {
	FactorResult *string
	Links        map[string]any
}

// GetFactorResult returns the verification's result.
func (v *UserFactorVerifyResponse) GetFactorResult() string {
	if v == nil || v.FactorResult == nil {
		return ""
	}
	return *v.FactorResult
}

// GetFactorTransactionStatus200Response is a push transaction's state.
type GetFactorTransactionStatus200Response struct {
	UserFactorPushTransactionWaiting  *struct{}
	UserFactorPushTransaction         *struct{}
	UserFactorPushTransactionRejected *struct{}
	UserFactorPushTransactionTimeout  *struct{}
}

// UserFactorAPIService lists and verifies factors.
type UserFactorAPIService struct{}

// ApiListFactorsRequest lists a user's factors.
type ApiListFactorsRequest struct{}

// ApiVerifyFactorRequest verifies a factor.
type ApiVerifyFactorRequest struct{}

// ApiGetFactorTransactionStatusRequest reads a push transaction.
type ApiGetFactorTransactionStatusRequest struct{}

// ListFactors returns a request.
func (*UserFactorAPIService) ListFactors(context.Context, string) ApiListFactorsRequest {
	return ApiListFactorsRequest{}
}

// VerifyFactor returns a request.
func (*UserFactorAPIService) VerifyFactor(context.Context, string, string) ApiVerifyFactorRequest {
	return ApiVerifyFactorRequest{}
}

// GetFactorTransactionStatus returns a request.
func (*UserFactorAPIService) GetFactorTransactionStatus(context.Context, string, string, string) ApiGetFactorTransactionStatusRequest {
	return ApiGetFactorTransactionStatusRequest{}
}

// Execute answers ErrNotBuilt.
func (ApiListFactorsRequest) Execute() ([]ListFactors200ResponseInner, *APIResponse, error) {
	return nil, nil, ErrNotBuilt
}

// Execute answers ErrNotBuilt.
func (ApiVerifyFactorRequest) Execute() (*UserFactorVerifyResponse, *APIResponse, error) {
	return nil, nil, ErrNotBuilt
}

// Execute answers ErrNotBuilt.
func (ApiGetFactorTransactionStatusRequest) Execute() (*GetFactorTransactionStatus200Response, *APIResponse, error) {
	return nil, nil, ErrNotBuilt
}
