"""Storm's failures become one honest line: what is wrong and where, never a lone caret; memory is a resource."""

from qosbound.errors import ModelError, ResourceError
from qosbound.models.engine import _storm_error


def test_the_error_line_and_the_quoted_source_line_are_kept_and_the_caret_dropped():
    e = RuntimeError("ERROR (PrismParser.cpp:64): Parsing error in line 5, column 21: expecting expression:\n"
                     "\tconst double p = 0/;\n\t                   ^\n")
    err = _storm_error("m.prism: cannot parse", e)
    assert isinstance(err, ModelError)
    text = str(err)
    assert "line 5, column 21" in text and "const double p = 0/;" in text
    assert "ERROR (" not in text and not text.rstrip().endswith("^") and "\n" not in text


def test_bad_alloc_is_a_resource_error_not_bad_input():
    err = _storm_error("steady state", RuntimeError("std::bad_alloc"))
    assert isinstance(err, ResourceError) and err.exit_code == 4 and "memory" in str(err)
