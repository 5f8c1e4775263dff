"""Helm: rendering charts (render), and mapping rendered findings back to template lines (mapping,
template_lines).
"""
