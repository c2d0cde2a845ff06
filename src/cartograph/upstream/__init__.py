"""Connections to upstream MCP servers, and the catalog snapshots of what they answered."""
