"""The reviewer's side (/review/workspace/): their queue, an item to grade and its history, skip for later, where
the passage sits in its source; the reviewer's API.
"""
