"""Who a user is and what they may do: roles, accounts and invitations, sign-in limits and API tokens, how a
session signed in, the account audit log.
"""
