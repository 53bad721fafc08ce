package main

import (
	"context"
	"errors"
	"fmt"

	"purra.dev/purramcp"
	"purra.dev/purramcp/oauth"
)

// migrated signs in, then calls test-tool; a call refused as unauthorized
// (the server's authorization server changed and the token is no longer
// accepted) is what a user meets as "sign in again": it signs in once
// more with the same store, which discovers the authorization server the
// server names now, and calls again.
func migrated(ctx context.Context, serverURL string) error {
	store := &memoryStore{}
	login := func() error {
		_, err := oauth.Login(ctx, oauth.LoginOptions{ServerURL: serverURL,
			OAuth: &oauth.Config{ClientMetadataURL: cimdURL}, Store: store, Browse: followHeadless})
		return err
	}
	if err := login(); err != nil {
		return fmt.Errorf("login: %w", err)
	}
	err := call(ctx, serverURL, store, "test-tool", `{}`)
	var step *stepUp
	if purramcp.CodeOf(err) != purramcp.CodeUnauthorized && !errors.As(err, &step) {
		return err
	}
	if err := login(); err != nil {
		return fmt.Errorf("second login: %w", err)
	}
	return call(ctx, serverURL, store, "test-tool", `{}`)
}
