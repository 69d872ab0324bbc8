// Package dashboard serves the operator's web dashboard: plain HTML, CSS
// and a little JavaScript embedded in the binary (no CDN, no build step:
// it works on an air-gapped broker VM). The pages read the operator's JSON
// endpoints (/b/reconcile, /b/runs, /b/upgrades, /b/instances,
// /b/instances/{id}) and post to /b/reconcile, /b/upgrades and an
// instance's /adopt and /restore (a restore only once the operator
// confirmed it), with the browser's basic-auth credentials; they render every value as text (never as HTML), under a
// Content-Security-Policy that allows no inline script and no other origin.
package dashboard

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

//go:embed static
var files embed.FS

// csp allows the page's own files only: no inline script or style, no
// other origin, no framing.
const csp = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// Handler serves /dashboard (the overview), /dashboard/instances/{id} (one
// instance) and /dashboard/static/*. It checks no credentials: the daemon
// mounts it behind the operator's.
//
// The pages work wherever the daemon's root is: at the origin's root, or
// under a path prefix a reverse proxy strips (/blacksmith/dashboard). Each
// page's links and files are written relative to the path it is asked
// for, and the script derives the prefix from the page's path.
func Handler() http.Handler {
	static, _ := fs.Sub(files, "static")
	mux := http.NewServeMux()
	page := func(name string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			b, err := fs.ReadFile(static, name)
			if err != nil {
				http.Error(w, "page missing", http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write(relative(b, r.URL.EscapedPath()))
		}
	}
	mux.HandleFunc("GET /dashboard", page("index.html"))
	mux.HandleFunc("GET /dashboard/{$}", page("index.html"))
	mux.HandleFunc("GET /dashboard/instances/{id}", page("instance.html"))
	mux.Handle("GET /dashboard/static/", http.StripPrefix("/dashboard/static/", http.FileServerFS(static)))
	return headers(mux)
}

// relative is the page html asked for at path with its root-relative
// references (href="/dashboard", src="/dashboard/static/app.js") made
// relative to path: "./dashboard" at /dashboard, "../dashboard" at
// /dashboard/, "../../dashboard" at /dashboard/instances/{id}. They then
// reach the daemon's root however deep a reverse proxy serves it (its
// prefix is before path, the same in the browser's URL and here).
func relative(html []byte, path string) []byte {
	up := "./"
	if n := strings.Count(path, "/") - 1; n > 0 {
		up = strings.Repeat("../", n)
	}
	return []byte(strings.NewReplacer(`href="/`, `href="`+up, `src="/`, `src="`+up).Replace(string(html)))
}

// headers sets the security headers of every answer.
func headers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		if !strings.HasPrefix(r.URL.Path, "/dashboard/static/") {
			h.Set("Cache-Control", "no-store")
		}
		next.ServeHTTP(w, r)
	})
}
