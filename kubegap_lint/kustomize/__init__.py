"""Kustomize: rendering a kustomization with origin annotations (render, origin), what its files
include (tree), and mapping findings on rendered objects back to the base, patch or generator
line that wrote them (patches, mapping).
"""
