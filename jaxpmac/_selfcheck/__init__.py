"""``python -m jaxpmac``: the bundled known answers and the check against them. Uses the whole
package, and nothing imports it.
"""
