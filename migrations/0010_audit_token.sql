-- 0010: every audit row names the token its call was made with, never the token: its jti
-- ("jti:" and at most 128 printable characters), or "sha256:" and the hex digest of the token
-- when it has no jti; NULL for calls made without a token (a configured local identity).
ALTER TABLE fleet.audit_log ADD COLUMN token_ref text
    CHECK (token_ref ~ '^(jti:[!-~]{1,128}|sha256:[0-9a-f]{64})$');
