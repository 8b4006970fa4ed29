#!/bin/sh
# The commits since the last tag, one line each.
git log --oneline "$(git describe --tags --abbrev=0)..HEAD"
