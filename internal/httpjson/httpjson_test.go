package httpjson_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/blacksmith-reconciler/blacksmith/internal/httpjson"
)

func TestWriteError(t *testing.T) {
	rec := httptest.NewRecorder()
	httpjson.WriteError(rec, http.StatusConflict, "ConcurrencyError", "busy")
	if rec.Code != http.StatusConflict || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, content type %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	if want := "{\n  \"error\": \"ConcurrencyError\",\n  \"description\": \"busy\"\n}\n"; rec.Body.String() != want {
		t.Fatalf("body %q, want %q", rec.Body.String(), want)
	}
	rec = httptest.NewRecorder()
	httpjson.Write(rec, http.StatusOK, httpjson.Error{Description: "no code"})
	if want := "{\n  \"description\": \"no code\"\n}\n"; rec.Body.String() != want {
		t.Fatalf("body %q, want %q", rec.Body.String(), want)
	}
}
