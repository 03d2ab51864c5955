"""Who a user is and what they may do: roles, accounts, invitations, tokens, their settings."""
