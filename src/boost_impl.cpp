// The one translation unit that compiles Asio, Asio SSL and Beast
// (BOOST_ASIO_SEPARATE_COMPILATION / BOOST_BEAST_SEPARATE_COMPILATION are set
// for this build's targets only; installed consumers use Asio header-only).
#if defined(BOOST_ASIO_SEPARATE_COMPILATION)
#include <boost/asio/impl/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
#endif
#if defined(BOOST_BEAST_SEPARATE_COMPILATION)
#include <boost/beast/src.hpp>
#endif
