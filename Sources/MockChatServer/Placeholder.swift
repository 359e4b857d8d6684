// MockChatServer
