"""CI (stage 5): reports for pull-request review and dry runs, in the formats CI systems
read (text, json, markdown, sarif, junit, github annotations).
"""
