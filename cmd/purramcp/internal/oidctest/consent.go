package oidctest

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
)

// maxPageBytes bounds each page the harness reads from the provider.
const maxPageBytes = 1 << 20

// maxSteps bounds the requests of one Consent.
const maxSteps = 16

// Login is the login Consent submits on the provider's sign-in page.
const Login = "purramcp-e2e-user"

// formAction and formPrompt find a development interaction page's form:
// where it posts and which prompt it answers ("login" or "consent").
var (
	formAction = regexp.MustCompile(`<form[^>]*action="([^"]+)"[^>]*method="post"`)
	formPrompt = regexp.MustCompile(`<input type="hidden" name="prompt" value="(login|consent)"/>`)
)

// Consent plays the user at the provider: it follows authURL through the
// provider's redirects, submits each development interaction page (the
// sign-in form with [Login], the consent form) with one cookie jar, as a
// browser would, and returns the URL the provider finally redirects to,
// off its own origin (the client's redirect_uri with the code), without
// requesting it. A provider session from an earlier Consent skips the
// sign-in page; a grant the user already gave skips the consent page.
func (p *Provider) Consent(ctx context.Context, authURL string) (string, error) {
	jar, err := p.jar()
	if err != nil {
		return "", err
	}
	client := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	issuer, err := url.Parse(p.Issuer)
	if err != nil {
		return "", err
	}
	next, method, form := authURL, http.MethodGet, url.Values(nil)
	for range maxSteps {
		u, err := url.Parse(next)
		if err != nil {
			return "", err
		}
		if u.Host != issuer.Host {
			return next, nil
		}
		var body io.Reader
		if method == http.MethodPost {
			body = strings.NewReader(form.Encode())
		}
		req, err := http.NewRequestWithContext(ctx, method, next, body)
		if err != nil {
			return "", err
		}
		if method == http.MethodPost {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		resp, err := client.Do(req)
		if err != nil {
			return "", err
		}
		page, err := io.ReadAll(io.LimitReader(resp.Body, maxPageBytes))
		_ = resp.Body.Close()
		if err != nil {
			return "", err
		}
		switch {
		case resp.StatusCode >= 300 && resp.StatusCode < 400:
			loc, err := resp.Location()
			if err != nil {
				return "", err
			}
			next, method, form = loc.String(), http.MethodGet, nil
		case resp.StatusCode == http.StatusOK:
			action, prompt := formAction.FindSubmatch(page), formPrompt.FindSubmatch(page)
			if action == nil || prompt == nil {
				return "", fmt.Errorf("%w: a page without an interaction form (status %d)", errBadAnswer, resp.StatusCode)
			}
			target, err := resp.Request.URL.Parse(html.UnescapeString(string(action[1])))
			if err != nil {
				return "", err
			}
			form = url.Values{"prompt": {string(prompt[1])}}
			if string(prompt[1]) == "login" {
				form.Set("login", Login)
				form.Set("password", "any")
			}
			next, method = target.String(), http.MethodPost
		default:
			return "", fmt.Errorf("%w: status %d", errBadAnswer, resp.StatusCode)
		}
	}
	return "", fmt.Errorf("%w: more than %d steps", errBadAnswer, maxSteps)
}

// jar is the provider's cookie jar: one browser for every Consent, so a
// sign-in is remembered as a browser session would be.
func (p *Provider) jar() (http.CookieJar, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cookies == nil {
		j, err := cookiejar.New(nil)
		if err != nil {
			return nil, err
		}
		p.cookies = j
	}
	return p.cookies, nil
}

// Browse is a purramcp login Browse: [Provider.Consent], then the
// redirect delivered to the client's loopback listener.
func (p *Provider) Browse(ctx context.Context, authURL string) error {
	redirect, err := p.Consent(ctx, authURL)
	if err != nil {
		return err
	}
	resp, err := get(ctx, http.DefaultClient, redirect)
	return answeredOK(resp, err, "the redirect")
}

// RevokeRefreshToken revokes a public client's refresh token at the
// provider's revocation endpoint (RFC 7009), which ends the whole grant:
// no refresh token of it works again. Access tokens already issued are
// JWTs the MCP server verifies alone, so they stay valid until they
// expire.
func (p *Provider) RevokeRefreshToken(ctx context.Context, clientID, refreshToken string) error {
	resp, err := get(ctx, http.DefaultClient, p.Issuer+"/.well-known/openid-configuration")
	if err != nil {
		return err
	}
	var meta struct {
		Revocation string `json:"revocation_endpoint"`
	}
	err = json.NewDecoder(io.LimitReader(resp.Body, maxPageBytes)).Decode(&meta)
	_ = resp.Body.Close()
	if err != nil || meta.Revocation == "" {
		return fmt.Errorf("%w: no revocation endpoint", errBadAnswer)
	}
	form := url.Values{"token": {refreshToken}, "token_type_hint": {"refresh_token"}, "client_id": {clientID}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, meta.Revocation, strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err = http.DefaultClient.Do(req)
	return answeredOK(resp, err, "revocation")
}

// answeredOK ends a request whose answer only has to be 200 OK: err when
// the request failed, else the body is drained (at most maxPageBytes) and
// closed, and any other status is an error naming what answered.
func answeredOK(resp *http.Response, err error, what string) error {
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxPageBytes))
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%w: %s answered %d", errBadAnswer, what, resp.StatusCode)
	}
	return nil
}
