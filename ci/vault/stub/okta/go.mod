module github.com/okta/okta-sdk-golang/v5

go 1.26
